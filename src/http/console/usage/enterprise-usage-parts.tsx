import type { EnterpriseUsage, ProductPoint, ProductUsage } from '../../../domain/usage/enterprise-usage.js';
import type { ConsoleContext } from '../context.js';
import { memberPath } from '../enterprise/forms.js';
import { csvLine } from '../operator/csv.js';
import { DataTable, Empty } from '../ui.js';
import { RefusalReason } from './refusal-reason.js';
import {
  ChartPanel,
  deniedColumn,
  PointsTable,
  timesOf,
  seatColumns,
  seatSeries,
  UsageSection,
} from './usage-section.js';

/** Characters of a product's id and of a machine's fingerprint on screen; the whole one on hover. */
const PRODUCT_CHARS = 24;
const FINGERPRINT_CHARS = 16;

/** One product: its summary, its chart (peak against licensed) and the same numbers as a table. */
function ProductPanel(props: { context: ConsoleContext; usage: EnterpriseUsage; product: ProductUsage }) {
  const { t } = props.context;
  const { product, usage } = props;
  const points = product.points;
  return (
    <ChartPanel
      className="usage-product"
      product={product.product}
      compact
      title={`${product.product}: ${t('usage.seatsChart')}`}
      caption={t('usage.seatsChart')}
      times={timesOf(points, usage.bucket)}
      series={seatSeries(t, points)}
      heading={
        <>
          <h3>
            <code>{product.product}</code>
          </h3>
          <p class="note">
            {t('usage.ent.summary', {
              peak: product.peakSeats,
              licensed: product.licensedSeats ?? t('usage.ent.unlimited'),
              denied: product.denied,
              full: product.bucketsAtCapacity,
              buckets: points.length,
            })}
          </p>
        </>
      }
      table={
        <PointsTable<ProductPoint>
          context={props.context}
          bucket={usage.bucket}
          points={points}
          columns={[...seatColumns<ProductPoint>(t), deniedColumn<ProductPoint>(t)]}
        />
      }
    />
  );
}

/** Each product of the enterprise in its panel, the products to act on first (the service's order). */
export function ProductCharts(props: { context: ConsoleContext; usage: EnterpriseUsage; csvHref: string }) {
  const { usage } = props;
  return (
    <UsageSection
      context={props.context}
      heading={props.context.t('usage.ent.products')}
      csvHref={props.csvHref}
      empty={usage.products.length === 0}
      panels={usage.products.map((product) => (
        <ProductPanel context={props.context} usage={usage} product={product} />
      ))}
    />
  );
}

/** An employee by name, linked to his page, with the account he signs in with. */
function Employee(props: { account: string; name: string | null; globalId: string | null }) {
  const { account, name, globalId } = props;
  const label = name === null || name === '' ? account : name;
  return (
    <>
      {globalId === null ? label : <a href={memberPath(globalId)}>{label}</a>}
      {label !== account && (
        <>
          <br />
          <small>{account}</small>
        </>
      )}
    </>
  );
}

/**
 * Who was refused: the audit log's lease.denied rows of this enterprise, a line per employee,
 * product and UTC day (how many times, the last one's time), the latest day first.
 */
export function Refusals(props: { context: ConsoleContext; usage: EnterpriseUsage; limit: number }) {
  const { t } = props.context;
  const rows = props.usage.refusals;
  return (
    <section class="refusals">
      <h2>{t('usage.ent.refusals')}</h2>
      {rows.length === 0 ? (
        <Empty>{t('usage.ent.refusalsNone')}</Empty>
      ) : (
        <DataTable
          context={props.context}
          rows={rows}
          columns={[
            { kind: 'code', header: t('usage.ent.day'), value: (r) => r.at.toISOString().slice(0, 10) },
            {
              kind: 'text',
              header: t('usage.ent.employee'),
              render: (r) => <Employee account={r.account} name={r.memberName} globalId={r.memberGlobalId} />,
            },
            { kind: 'code', header: t('usage.product'), value: (r) => r.product, max: PRODUCT_CHARS },
            { kind: 'number', header: t('usage.ent.times'), className: 'times', value: (r) => r.times },
            {
              kind: 'text',
              header: t('usage.ent.last'),
              render: (r) => (
                <time dateTime={r.at.toISOString()} title={r.at.toISOString()}>
                  {r.at.toISOString().slice(11, 19)}
                </time>
              ),
            },
            {
              kind: 'text',
              header: t('usage.ent.reason'),
              className: 'reason',
              render: (r) => <RefusalReason context={props.context} code={r.code} message={r.reason} />,
            },
          ]}
        />
      )}
      {rows.length >= props.limit && <p class="note">{t('usage.ent.limited', { count: props.limit })}</p>}
    </section>
  );
}

/** Who holds a seat now: the enterprise's live leases (and offline ones still holding a seat). */
export function Holders(props: { context: ConsoleContext; usage: EnterpriseUsage; limit: number }) {
  const { t } = props.context;
  const rows = props.usage.holders;
  return (
    <section class="holders">
      <h2>{t('usage.ent.holders')}</h2>
      {rows.length === 0 ? (
        <Empty>{t('usage.ent.holdersNone')}</Empty>
      ) : (
        <DataTable
          context={props.context}
          rows={rows}
          columns={[
            {
              kind: 'text',
              header: t('usage.ent.employee'),
              render: (h) =>
                h.holderKind === 'lock' ? (
                  t('usage.ent.lock', { lock: h.holder })
                ) : (
                  <Employee account={h.holder} name={h.memberName} globalId={h.memberGlobalId} />
                ),
            },
            {
              kind: 'code',
              header: t('usage.product'),
              value: (h) => h.product,
              max: PRODUCT_CHARS,
              sub: (h) => h.productName,
            },
            { kind: 'id', header: t('usage.assetNum'), value: (h) => h.assetNum },
            {
              kind: 'id',
              header: t('usage.ent.machine'),
              value: (h) => h.fingerprint,
              max: FINGERPRINT_CHARS,
              sub: (h) => (h.offline ? t('usage.ent.offline') : undefined),
            },
            { kind: 'time', header: t('usage.ent.since'), value: (h) => h.since },
          ]}
        />
      )}
      {rows.length >= props.limit && <p class="note">{t('usage.ent.limited', { count: props.limit })}</p>}
    </section>
  );
}

/** Each product's points as CSV, one product and bucket a line. */
export function enterpriseUsageCsv(usage: EnterpriseUsage): string {
  let body = csvLine(['product', 'at', 'peakSeats', 'licensedSeats', 'seatHours', 'denied']);
  for (const product of usage.products) {
    for (const p of product.points) {
      body += csvLine([
        product.product,
        new Date(p.at).toISOString(),
        p.peakSeats,
        p.licensedSeats,
        p.seatHours,
        p.denied,
      ]);
    }
  }
  return body;
}
