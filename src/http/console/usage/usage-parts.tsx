import type { LicenseLine, UsageReport } from '../../../domain/usage/usage.service.js';
import type { ConsoleContext } from '../context.js';
import { csvLine } from '../operator/csv.js';
import { Empty } from '../ui.js';
import { LineChart } from './chart.js';

function percent(value: number | null): string {
  return value === null ? '—' : `${(value * 100).toFixed(1)}%`;
}

export function when(at: number, bucket: UsageReport['bucket']): string {
  const iso = new Date(at).toISOString();
  return bucket === 'hour' ? `${iso.slice(0, 13)}:00` : iso.slice(0, 10);
}

/** The first and the last bucket's time, written under a chart's axis. */
export function rangeOf(
  points: ReadonlyArray<{ at: number }>,
  bucket: UsageReport['bucket'],
): [string, string] | undefined {
  const first = points[0];
  const last = points[points.length - 1];
  return first === undefined || last === undefined
    ? undefined
    : [when(first.at, bucket), when(last.at, bucket)];
}

/** The charts of a report and, below them, the table of the very numbers they draw. */
export function UsageCharts(props: { context: ConsoleContext; report: UsageReport; csvHref: string }) {
  const { t } = props.context;
  const { report } = props;
  const series = report.series;
  const range = rangeOf(series, report.bucket);
  return (
    <section class="usage">
      <LineChart
        title={t('usage.seatsChart')}
        range={range}
        series={[
          { name: t('usage.series.peak'), className: 'peak', values: series.map((p) => p.peakSeats) },
          {
            name: t('usage.series.licensed'),
            className: 'licensed',
            values: series.map((p) => p.licensedSeats),
          },
        ]}
      />
      <LineChart
        title={t('usage.deniedChart')}
        range={range}
        series={[
          { name: t('usage.series.denied'), className: 'denied', values: series.map((p) => p.denied) },
        ]}
      />
      <p>
        <a href={props.csvHref} download>
          {t('usage.csv')}
        </a>
      </p>
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
                <th>{t('usage.utilization')}</th>
                <th>{t('usage.series.denied')}</th>
                <th>{t('usage.consumed')}</th>
              </tr>
            </thead>
            <tbody>
              {series.map((p) => (
                <tr data-at={p.at}>
                  <td>{when(p.at, report.bucket)}</td>
                  <td class="peak">{p.peakSeats}</td>
                  <td class="licensed">{p.licensedSeats ?? '—'}</td>
                  <td>{p.seatHours}</td>
                  <td>{percent(p.utilization)}</td>
                  <td class="denied">{p.denied}</td>
                  <td>{p.consumed}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </section>
  );
}

export function LicenseTable(props: {
  context: ConsoleContext;
  title: string;
  lines: LicenseLine[];
  kind: string;
}) {
  const { t } = props.context;
  return (
    <section class={`licenses ${props.kind}`}>
      <h2>{props.title}</h2>
      {props.lines.length === 0 ? (
        <Empty>{t('usage.none')}</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('usage.product')}</th>
                <th>{t('usage.assetNum')}</th>
                <th>{t('usage.enterprise')}</th>
                <th>{t('usage.licensed')}</th>
                <th>{t('usage.peak')}</th>
                <th>{t('usage.utilization')}</th>
                <th>{t('usage.bucketsAtCapacity')}</th>
              </tr>
            </thead>
            <tbody>
              {props.lines.map((l) => (
                <tr>
                  <td>
                    <code>{l.product}</code>
                  </td>
                  <td>{l.assetNum}</td>
                  <td>{l.enterpriseName ?? '—'}</td>
                  <td>{l.licensedSeats ?? '—'}</td>
                  <td>{l.peakSeats}</td>
                  <td>{percent(l.utilization)}</td>
                  <td>{l.bucketsAtCapacity}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** The series as CSV: the chart's and the table's numbers, one bucket a line. */
export function usageCsv(report: UsageReport): string {
  let body = csvLine(['at', 'peakSeats', 'licensedSeats', 'seatHours', 'utilization', 'denied', 'consumed']);
  for (const p of report.series) {
    body += csvLine([
      new Date(p.at).toISOString(),
      p.peakSeats,
      p.licensedSeats,
      p.seatHours,
      p.utilization,
      p.denied,
      p.consumed,
    ]);
  }
  return body;
}
