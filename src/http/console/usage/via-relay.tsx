import type { RelayUsageLine } from '../../../domain/usage/usage.service.js';
import type { ConsoleContext } from '../context.js';
import { DataTable } from '../ui.js';

/**
 * Both Usage pages' "via relay": the usage in the range that relays reported from closed networks
 * (docs/relay.md), per relay. It is in the charts already; this says how much of it came that way.
 * Nothing is shown where no relay reported: most platforms have none.
 */
export function ViaRelay(props: {
  context: ConsoleContext;
  lines: readonly RelayUsageLine[];
  /** The page of one relay's usage (the operator's page, filtered to it); none: no link. */
  href?: (relayId: string) => string;
}) {
  const { context, lines, href } = props;
  const { t } = context;
  if (lines.length === 0) return null;
  return (
    <section class="usage via-relay" aria-labelledby="via-relay-title">
      <h2 id="via-relay-title">{t('usage.viaRelay')}</h2>
      <p class="note">{t('usage.viaRelayIntro')}</p>
      <DataTable
        context={context}
        className="via-relay"
        rows={lines}
        row={(l) => ({ 'data-relay': l.relayId })}
        columns={[
          {
            kind: 'id',
            header: t('relays.relay'),
            value: (l) => l.relayId,
            href: href === undefined ? undefined : (l) => href(l.relayId),
          },
          { kind: 'number', header: t('usage.viaRelayPeak'), className: 'peak', value: (l) => l.peakSeats },
          {
            kind: 'number',
            header: t('usage.seatHours'),
            className: 'seat-hours',
            value: (l) => l.seatHours,
          },
        ]}
      />
    </section>
  );
}
