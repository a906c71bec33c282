import type { EnterpriseUsage, ProductPoint, ProductUsage } from '../../../domain/usage/enterprise-usage.js';
import type { ConsoleContext } from '../context.js';
import { memberPath } from '../enterprise/forms.js';
import { csvLine } from '../operator/csv.js';
import { Empty, Time } from '../ui.js';
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
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('usage.ent.day')}</th>
                <th>{t('usage.ent.employee')}</th>
                <th>{t('usage.product')}</th>
                <th>{t('usage.ent.times')}</th>
                <th>{t('usage.ent.last')}</th>
                <th>{t('usage.ent.reason')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>{r.at.toISOString().slice(0, 10)}</td>
                  <td>
                    <Employee account={r.account} name={r.memberName} globalId={r.memberGlobalId} />
                  </td>
                  <td>
                    <code>{r.product}</code>
                  </td>
                  <td class="times">{r.times}</td>
                  <td>
                    <time dateTime={r.at.toISOString()}>{r.at.toISOString().slice(11, 19)}</time>
                  </td>
                  <td class="reason">
                    <RefusalReason context={props.context} code={r.code} message={r.reason} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('usage.ent.employee')}</th>
                <th>{t('usage.product')}</th>
                <th>{t('usage.assetNum')}</th>
                <th>{t('usage.ent.machine')}</th>
                <th>{t('usage.ent.since')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((h) => (
                <tr>
                  <td>
                    {h.holderKind === 'lock' ? (
                      t('usage.ent.lock', { lock: h.holder })
                    ) : (
                      <Employee account={h.holder} name={h.memberName} globalId={h.memberGlobalId} />
                    )}
                  </td>
                  <td>
                    <code>{h.product}</code>
                    {h.productName !== null && ` ${h.productName}`}
                  </td>
                  <td>{h.assetNum}</td>
                  <td>
                    <code class="id">{h.fingerprint}</code>
                    {h.offline && ` (${t('usage.ent.offline')})`}
                  </td>
                  <td>
                    <Time at={h.since} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
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
