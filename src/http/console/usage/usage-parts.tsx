import type { LicenseLine, UsagePoint, UsageReport } from '../../../domain/usage/usage.service.js';
import type { ConsoleContext } from '../context.js';
import { csvLine } from '../operator/csv.js';
import { Empty } from '../ui.js';
import {
  ChartPanel,
  deniedColumn,
  PointsTable,
  rangeOf,
  seatColumns,
  seatSeries,
  UsageSection,
} from './usage-section.js';

function percent(value: number | null): string {
  return value === null ? '—' : `${(value * 100).toFixed(1)}%`;
}

/**
 * The operator's charts over every license the filter takes: seats against licensed, and refused
 * check-outs; below them one table of every number of the series.
 */
export function UsageCharts(props: { context: ConsoleContext; report: UsageReport; csvHref: string }) {
  const { t } = props.context;
  const { report } = props;
  const series = report.series;
  const range = rangeOf(series, report.bucket);
  return (
    <UsageSection
      context={props.context}
      csvHref={props.csvHref}
      empty={false}
      panels={
        <>
          <ChartPanel title={t('usage.seatsChart')} range={range} series={seatSeries(t, series)} />
          <ChartPanel
            title={t('usage.deniedChart')}
            range={range}
            series={[
              { name: t('usage.series.denied'), className: 'denied', values: series.map((p) => p.denied) },
            ]}
          />
        </>
      }
    >
      <PointsTable<UsagePoint>
        context={props.context}
        bucket={report.bucket}
        points={series}
        columns={[
          ...seatColumns<UsagePoint>(t),
          { label: t('usage.utilization'), cell: (p) => percent(p.utilization) },
          deniedColumn<UsagePoint>(t),
          { label: t('usage.consumed'), cell: (p) => p.consumed },
        ]}
      />
    </UsageSection>
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
                <th>{t('usage.enterpriseColumn')}</th>
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
