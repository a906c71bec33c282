import type { EnterpriseUsage, ProductUsage } from '../../../domain/usage/enterprise-usage.js';
import type { ConsoleContext } from '../context.js';
import { memberPath } from '../enterprise/forms.js';
import { csvLine } from '../operator/csv.js';
import { Empty, Time } from '../ui.js';
import { LineChart } from './chart.js';
import { rangeOf, when } from './usage-parts.js';

/** One product: its summary, its chart (peak against licensed) and the same numbers as a table. */
function ProductSection(props: { context: ConsoleContext; usage: EnterpriseUsage; product: ProductUsage }) {
  const { t } = props.context;
  const { product, usage } = props;
  const points = product.points;
  return (
    <section class="usage-product" data-product={product.product}>
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
      <LineChart
        title={`${product.product}: ${t('usage.seatsChart')}`}
        compact
        range={rangeOf(points, usage.bucket)}
        series={[
          { name: t('usage.series.peak'), className: 'peak', values: points.map((p) => p.peakSeats) },
          {
            name: t('usage.series.licensed'),
            className: 'licensed',
            values: points.map((p) => p.licensedSeats),
          },
        ]}
      />
      <details class="table-view">
        <summary>{t('usage.tableView')}</summary>
        <div class="table-wrap">
          <table class="usage-table">
            <thead>
              <tr>
                <th>{t('usage.at')}</th>
                <th>{t('usage.series.peak')}</th>
                <th>{t('usage.series.licensed')}</th>
                <th>{t('usage.seatHours')}</th>
                <th>{t('usage.series.denied')}</th>
              </tr>
            </thead>
            <tbody>
              {points.map((p) => (
                <tr data-at={p.at}>
                  <td>{when(p.at, usage.bucket)}</td>
                  <td class="peak">{p.peakSeats}</td>
                  <td class="licensed">{p.licensedSeats ?? '—'}</td>
                  <td>{p.seatHours}</td>
                  <td class="denied">{p.denied}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

export function ProductCharts(props: { context: ConsoleContext; usage: EnterpriseUsage; csvHref: string }) {
  const { t } = props.context;
  const { usage } = props;
  return (
    <section class="usage">
      <h2>{t('usage.ent.products')}</h2>
      {usage.products.length === 0 ? (
        <Empty>{t('usage.none')}</Empty>
      ) : (
        <>
          <p>
            <a href={props.csvHref} download>
              {t('usage.csv')}
            </a>
          </p>
          {usage.products.map((product) => (
            <ProductSection context={props.context} usage={usage} product={product} />
          ))}
        </>
      )}
    </section>
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

/** Who was refused: the audit log's lease.denied rows of this enterprise, newest first. */
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
                <th>{t('usage.ent.when')}</th>
                <th>{t('usage.ent.employee')}</th>
                <th>{t('usage.product')}</th>
                <th>{t('usage.ent.reason')}</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((r) => (
                <tr>
                  <td>
                    <Time at={r.at} />
                  </td>
                  <td>
                    <Employee account={r.account} name={r.memberName} globalId={r.memberGlobalId} />
                  </td>
                  <td>
                    <code>{r.product}</code>
                  </td>
                  <td>
                    <code>{r.code}</code> {r.reason}
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
