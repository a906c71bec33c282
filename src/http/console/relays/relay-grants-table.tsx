import type { GrantedLicense } from '../../../domain/relay/pool-grant.js';
import type { GrantShareView, RelayGrantView } from '../../../domain/relay/relay-grant.service.js';
import { may } from '../can.js';
import type { ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { operatorLinks } from '../operator/links.js';
import { Badge, DataTable, Empty, Ident, type BadgeTone } from '../ui.js';
import type { Area } from './relay-forms.js';

/** Characters of a grant id under its relay; the whole one on hover. */
const GRANT_ID_CHARS = 14;

const STATE_TONES: Record<RelayGrantView['state'], BadgeTone> = {
  running: 'ok',
  ended: 'neutral',
  returned: 'warn',
};

/** Seconds as hours to a tenth, a use under a tenth said as such rather than as none. */
function hoursOf(seconds: number): string {
  if (seconds > 0 && seconds < 360) return '<0.1';
  return String(Math.round(seconds / 360) / 10);
}

/**
 * The shares of usage limits a grant holds of one license, with what the relay last reported
 * using of each: `time 0.5 / 10 h · amount 20 / 30` (`–` for a use not reported yet).
 */
export function shareLine(context: ConsoleContext, share: GrantShareView): string {
  const { t } = context;
  const said = <T,>(used: T | null | undefined, as: (n: T) => string) =>
    used === undefined || used === null ? '–' : as(used);
  return [
    ...(share.timeSeconds === null
      ? []
      : [
          t('relays.shareTime', {
            used: said(share.used?.timeSeconds, hoursOf),
            share: hoursOf(share.timeSeconds),
          }),
        ]),
    ...(share.amount === null
      ? []
      : [t('relays.shareAmount', { used: said(share.used?.amount, String), share: String(share.amount) })]),
  ].join(' · ');
}

/**
 * Shares of usage limits as just granted or given back: `10 h of its time, 30 of its amount`
 * (absent or null: no share of that limit).
 */
export function heldLine(
  context: ConsoleContext,
  shares: { timeSeconds?: number | null | undefined; amount?: number | null | undefined },
): string {
  const { t } = context;
  const { timeSeconds, amount } = shares;
  return [
    ...(timeSeconds === undefined || timeSeconds === null
      ? []
      : [t('relays.heldTime', { share: hoursOf(timeSeconds) })]),
    ...(amount === undefined || amount === null ? [] : [t('relays.heldAmount', { share: String(amount) })]),
  ].join(t('relays.heldSeparator'));
}

/**
 * A granted license as `ASSET/PRODUCT × seats`; `*` where every product of the lock was asked;
 * under it, the shares of its usage limits the grant holds.
 */
function LicenseLine(props: {
  context: ConsoleContext;
  license: GrantedLicense;
  share: GrantShareView | undefined;
  href?: string | undefined;
}) {
  const { license, href, share } = props;
  const name = <code>{`${license.assetNum}/${license.crmProductId ?? '*'}`}</code>;
  return (
    <span class="relay-license">
      {href === undefined ? name : <a href={href}>{name}</a>}
      {` × ${license.seats}`}
      {share === undefined ? null : <span class="relay-share">{shareLine(props.context, share)}</span>}
    </span>
  );
}

/** A grant's terms in words: its machines and its overage allowance, as a sentence or, short, as a table cell. */
export function termsLine(
  context: ConsoleContext,
  terms: { machines: number | null; overage: number },
  form: 'line' | 'cell' = 'line',
): string {
  const { t } = context;
  const none = form === 'line' ? 'relays.noOverage' : 'relays.noOverageCell';
  const some = form === 'line' ? 'relays.allowOverage' : 'relays.overageCell';
  return t(form === 'line' ? 'relays.termsLine' : 'relays.termsCell', {
    machines:
      terms.machines === null ? t('relays.anyMachine') : t('relays.listedMachines', { n: terms.machines }),
    overage: terms.overage === 0 ? t(none) : t(some, { n: terms.overage }),
  });
}

/** The usage page of one relay's reported usage (the operator's, who may read usage). */
export function relayUsageHref(relayId: string, query = ''): string {
  const params = new URLSearchParams(query);
  params.set('app', relayId);
  return `/console/operator/usage?${params.toString()}`;
}

/**
 * The grants, newest first, with the relay's newest imported report beside each: what a relay
 * was given and what it says it used. The operator's relay links to its usage, its licenses to
 * their pages; the administrator's page links nowhere it cannot go.
 */
export function RelayGrantsTable(props: { context: ConsoleContext; area: Area; grants: RelayGrantView[] }) {
  const { context, area, grants } = props;
  const { t } = context;
  if (grants.length === 0) return <Empty>{t('relays.empty')}</Empty>;
  const operator = area === 'operator';
  const usage = operator && may(context, 'usage');
  return (
    <DataTable
      context={context}
      className="relay-grants"
      rows={grants}
      row={(g) => ({ 'data-grant': g.grantId, 'data-relay': g.relayId, 'data-state': g.state })}
      columns={[
        {
          kind: 'id',
          header: t('relays.relay'),
          className: 'relay',
          value: (g) => g.relayId,
          href: usage ? (g) => relayUsageHref(g.relayId) : undefined,
          // The grant's id, which a return names: the relay's grants are told apart by it.
          sub: (g) => (
            <>
              {`${t('relays.grantId')} `}
              <Ident context={context} value={g.grantId} max={GRANT_ID_CHARS} />
            </>
          ),
        },
        {
          kind: 'text',
          header: t('relays.licenses'),
          className: 'licenses',
          // The vendor's terms under what was granted: machines listed, overage allowed.
          subHeader: t('relays.terms'),
          sub: (g) => <span class="relay-terms-cell">{termsLine(context, g, 'cell')}</span>,
          render: (g) => (
            <span class="relay-licenses">
              {g.licenses.map((l) => (
                <LicenseLine
                  context={context}
                  license={l}
                  share={g.shares.find(
                    (s) => s.assetNum === l.assetNum && s.crmProductId === (l.crmProductId ?? ''),
                  )}
                  href={operator ? operatorLinks.asset(l.assetNum) : undefined}
                />
              ))}
            </span>
          ),
        },
        { kind: 'number', header: t('relays.seats'), className: 'seats', value: (g) => g.seats },
        { kind: 'time', header: t('relays.ends'), className: 'ends', value: (g) => g.endsAt },
        {
          kind: 'text',
          header: t('relays.state'),
          className: 'state',
          render: (g) => (
            <span title={g.returnedAt === null ? undefined : new Date(g.returnedAt).toISOString()}>
              <Badge tone={STATE_TONES[g.state]}>{t(`relays.state.${g.state}` as MessageKey)}</Badge>
            </span>
          ),
        },
        {
          kind: 'time',
          header: t('relays.lastReport'),
          headerTitle: t('relays.lastReportTitle'),
          className: 'last-report',
          value: (g) => g.lastReport?.issuedAt,
        },
        {
          kind: 'number',
          header: t('relays.peak'),
          headerTitle: t('relays.peakTitle'),
          className: 'peak',
          // Past the granted seats under an overage allowance, said beside the peak: `5 (+1)`.
          value: (g) =>
            g.lastReport == null
              ? undefined
              : g.lastReport.overagePeak > 0
                ? `${g.lastReport.peakSeats} (+${g.lastReport.overagePeak})`
                : g.lastReport.peakSeats,
        },
        {
          kind: 'number',
          header: t('relays.seatHours'),
          className: 'seat-hours',
          value: (g) => g.lastReport?.seatHours,
        },
        {
          kind: 'number',
          header: t('relays.refusedCount'),
          className: 'refused',
          value: (g) => g.lastReport?.refused,
        },
      ]}
    />
  );
}
