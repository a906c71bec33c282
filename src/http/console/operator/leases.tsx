import type { LeaseListing } from '../../../domain/runtime/runtime.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Field, Time } from '../ui.js';
import { durationText } from './duration.js';
import { parseLeasesQuery, type LeasesQuery } from './leases-filter.js';
import { operatorMay } from '../../access/access.js';

const LEASES = '/console/operator/leases';
/** The runtime's listing has no offset: the page shows the newest leases and says so. */
const MAX_ROWS = 100;
const TOP_PRODUCTS = 20;
/** Characters of a fingerprint shown in the table; the whole one is its title. */
const FINGERPRINT_CHARS = 16;

/** Why a lease ended, as the runtime records it: its own two words, or the revocation's sentence. */
const END_REASONS: Record<string, MessageKey> = {
  checked_in: 'leases.reason.checkedIn',
  expired: 'leases.reason.expired',
  'the license was withdrawn': 'leases.reason.withdrawn',
  'the asset was disabled': 'leases.reason.assetDisabled',
  'the lent lock was disabled': 'leases.reason.lentLockDisabled',
  'the lock was withdrawn': 'leases.reason.lockWithdrawn',
  'the asset is no longer assigned to the member': 'leases.reason.unassigned',
  'the lending was returned': 'leases.reason.returned',
  'the license ended': 'leases.reason.licenseEnded',
  'the license is not valid yet': 'leases.reason.notYetValid',
  'the usage time is used up': 'leases.reason.timeUsedUp',
};

function reasonText(context: ConsoleContext, reason: string): string {
  const key = END_REASONS[reason];
  return key === undefined ? reason : context.t(key);
}

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

function LeaseRow(props: { context: ConsoleContext; lease: LeaseListing }) {
  const { context, lease } = props;
  const { t } = context;
  const ids = [lease.crmProductId, lease.productUri].filter((id): id is string => id !== null);
  const fingerprint =
    lease.fingerprint.length > FINGERPRINT_CHARS
      ? `${lease.fingerprint.slice(0, FINGERPRINT_CHARS)}…`
      : lease.fingerprint;
  return (
    <tr data-lease={lease.id} data-ended={lease.endedAt === null ? undefined : 'true'}>
      <td>
        {lease.productName ?? '—'}
        <br />
        <small>{ids.map((id, i) => [i > 0 && ' · ', <code>{id}</code>])}</small>
        <br />
        <small class="hint">{lease.appKey}</small>
      </td>
      <td>{lease.assetNum}</td>
      <td>
        <small>{t(`leases.holder.${lease.holderKind}`)}</small>
        <br />
        {lease.holder}
      </td>
      <td>
        <code class="fingerprint" title={lease.fingerprint}>
          {fingerprint}
        </code>
      </td>
      <td>{lease.offline ? t('common.yes') : t('common.no')}</td>
      <td>
        <Time at={lease.createdAt} />
      </td>
      <td>
        <Time at={lease.heartbeatAt} />
      </td>
      <td>
        <Time at={lease.expiresAt} />
      </td>
      <td>
        <Time at={lease.endedAt} />
        {lease.endReason !== null && (
          <>
            <br />
            <small class="reason">{reasonText(context, lease.endReason)}</small>
          </>
        )}
      </td>
      <td class="used">{durationText(t, lease.usedMs)}</td>
    </tr>
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
            <div class="table-wrap">
              <table class="leases">
                <thead>
                  <tr>
                    <th>{t('leases.product')}</th>
                    <th>{t('leases.assetNum')}</th>
                    <th>{t('leases.holder')}</th>
                    <th>{t('leases.fingerprint')}</th>
                    <th>{t('leases.offline')}</th>
                    <th>{t('leases.created')}</th>
                    <th>{t('leases.heartbeat')}</th>
                    <th>{t('leases.expires')}</th>
                    <th>{t('leases.ended')}</th>
                    <th>{t('leases.used')}</th>
                  </tr>
                </thead>
                <tbody>
                  {leases.map((lease) => (
                    <LeaseRow context={context} lease={lease} />
                  ))}
                </tbody>
              </table>
            </div>
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
