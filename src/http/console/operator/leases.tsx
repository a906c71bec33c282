import type { LeaseListing } from '../../../domain/runtime/runtime.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, DataTable, Empty, Field, type Column } from '../ui.js';
import { operatorLinks } from './links.js';
import { durationText } from './duration.js';
import { reasonText } from './lease-reasons.js';
import { parseLeasesQuery, type LeasesQuery } from './leases-filter.js';
import { operatorMay } from '../../access/access.js';

const LEASES = '/console/operator/leases';
/** The runtime's listing has no offset: the page shows the newest leases and says so. */
const MAX_ROWS = 100;
const TOP_PRODUCTS = 20;

function SeatsSummary(props: { context: ConsoleContext; seats: Array<{ product: string; seats: number }> }) {
  const { context, seats } = props;
  const { t } = context;
  return (
    <div class="seats">
      <h2>{t('leases.seats')}</h2>
      {seats.length === 0 ? (
        <Empty>{t('leases.noSeats')}</Empty>
      ) : (
        <>
          <p class="hint">{t('leases.seatsHint', { count: TOP_PRODUCTS })}</p>
          <div class="cards">
            {seats.map((s) => (
              <div class="card" data-seats={s.product}>
                <span class="value">{s.seats.toLocaleString('en')}</span>
                <code class="label">{s.product}</code>
              </div>
            ))}
          </div>
        </>
      )}
    </div>
  );
}

/** Characters of a lease id or a machine's fingerprint on screen; the whole one on hover. */
const ID_CHARS = 14;

/** A lease that holds its seat now: not ended, not past its expiry. The rest are ended. */
const isLive = (lease: LeaseListing, now: number) =>
  lease.endedAt === null && lease.expiresAt.getTime() > now;

/**
 * The columns both tables share: which lease, on which asset and for whom, of which product, on
 * which machine, and when it began. What else a lease has (its app, its heartbeats) is on its page.
 */
function leaseColumns(context: ConsoleContext): Array<Column<LeaseListing>> {
  const { t } = context;
  return [
    {
      kind: 'id',
      header: t('leases.lease'),
      className: 'lease',
      value: (l) => l.id,
      href: (l) => operatorLinks.lease(l.id),
      max: ID_CHARS,
    },
    {
      kind: 'id',
      header: t('leases.assetNum'),
      className: 'asset',
      value: (l) => l.assetNum,
      href: (l) => operatorLinks.asset(l.assetNum),
      sub: (l) => `${t(`leases.holder.${l.holderKind}`)} ${l.holder}`,
    },
    {
      kind: 'code',
      header: t('leases.product'),
      className: 'product',
      value: (l) => l.crmProductId ?? l.productUri,
      max: 24,
      sub: (l) => l.productName,
    },
    {
      kind: 'id',
      header: t('leases.machine'),
      className: 'machine',
      value: (l) => l.fingerprint,
      max: ID_CHARS,
    },
    { kind: 'time', header: t('leases.created'), value: (l) => l.createdAt },
  ];
}

function LiveLeases(props: { context: ConsoleContext; leases: LeaseListing[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="leases live"
      rows={props.leases}
      row={(l) => ({ 'data-lease': l.id })}
      columns={[
        ...leaseColumns(context),
        { kind: 'time', header: t('leases.expires'), value: (l) => l.expiresAt },
        {
          kind: 'text',
          header: t('common.status'),
          className: 'status',
          render: (l) => (
            <Badge tone={l.offline ? 'neutral' : 'ok'}>
              {t(l.offline ? 'leases.status.offline' : 'leases.status.online')}
            </Badge>
          ),
        },
      ]}
    />
  );
}

function EndedLeases(props: { context: ConsoleContext; leases: LeaseListing[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="leases ended"
      rows={props.leases}
      row={(l) => ({ 'data-lease': l.id, 'data-ended': 'true' })}
      columns={[
        ...leaseColumns(context),
        { kind: 'time', header: t('leases.ended'), value: (l) => l.endedAt ?? l.expiresAt },
        {
          kind: 'text',
          header: t('leases.reason'),
          className: 'reason',
          render: (l) =>
            l.endReason === null ? t('leases.reason.expired') : reasonText(context, l.endReason),
          sub: (l) => (l.offline ? t('leases.status.offline') : undefined),
        },
        {
          kind: 'number',
          header: t('leases.used'),
          className: 'used',
          value: (l) => durationText(t, l.usedMs),
        },
      ]}
    />
  );
}

/** GET /console/operator/leases: `GET /admin/runtime/leases`'s list and filters, and seats in use. */
export function leasesRoute(app: App): void {
  app.get<{ Querystring: LeasesQuery }>(
    '/operator/leases',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const { filter, form } = parseLeasesQuery(request.query);
      // One row more than shown: whether older leases were left out, without counting them.
      const [rows, seats] = await Promise.all([
        app.services.runtime.list({ ...filter, limit: MAX_ROWS + 1 }),
        app.services.runtime.seatsByProduct(),
      ]);
      const leases = rows.slice(0, MAX_ROWS);
      // Live leases apart from ended ones: an offline lease checked in early is ended, though it
      // keeps its seat until its expiry (the query lists it with the live ones for that).
      const now = Date.now();
      const live = leases.filter((l) => isLive(l, now));
      const ended = leases.filter((l) => !isLive(l, now));
      const filtered = form.app !== '' || form.assetNum !== '' || form.product !== '' || form.all;
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.leases')}>
          <SeatsSummary context={context} seats={seats.slice(0, TOP_PRODUCTS)} />
          <form method="get" action={LEASES} class="filters">
            <Field name="app" label={t('leases.app')} value={form.app} maxLength={100} />
            <Field name="assetNum" label={t('leases.assetNum')} value={form.assetNum} maxLength={64} />
            <Field
              name="product"
              label={t('leases.product')}
              value={form.product}
              placeholder={t('leases.productHint')}
              maxLength={255}
            />
            <p>
              <label class="inline-check">
                <input type="checkbox" name="all" value="1" checked={form.all} /> {t('leases.includeEnded')}
              </label>
            </p>
            <p>
              <button type="submit">{t('leases.filter')}</button>
            </p>
          </form>
          {leases.length === 0 ? (
            <Empty>{filtered ? t('leases.emptyFiltered') : t('leases.empty')}</Empty>
          ) : (
            <>
              <section class="leases-live">
                <h2>{t('leases.liveTitle')}</h2>
                {live.length === 0 ? (
                  <Empty>{t('leases.noneLive')}</Empty>
                ) : (
                  <LiveLeases context={context} leases={live} />
                )}
              </section>
              {(form.all || ended.length > 0) && (
                <section class="leases-ended">
                  <h2>{t('leases.endedTitle')}</h2>
                  <p class="hint">{t(form.all ? 'leases.endedHint' : 'leases.heldHint')}</p>
                  {ended.length === 0 ? (
                    <Empty>{t('leases.noneEnded')}</Empty>
                  ) : (
                    <EndedLeases context={context} leases={ended} />
                  )}
                </section>
              )}
            </>
          )}
          {rows.length > MAX_ROWS && (
            <p class="hint" role="status">
              {t('leases.newest', { count: MAX_ROWS })}
            </p>
          )}
        </Layout>,
      );
    },
  );
}
