import type { LicenseChart, LicensePoint, SaturationReport } from '../../../domain/usage/license-charts.js';
import type { Bucket } from '../../../domain/usage/usage.repository.js';
import type { LicenseLine, UsagePoint, UsageReport } from '../../../domain/usage/usage.service.js';
import type { ConsoleContext } from '../context.js';
import { csvLine } from '../operator/csv.js';
import { DataTable, Empty } from '../ui.js';
import { operatorLinks } from '../operator/links.js';
import {
  ChartPanel,
  deniedColumn,
  PointsTable,
  timesOf,
  seatColumns,
  seatSeries,
  UsageSection,
} from './usage-section.js';

function percent(value: number | null): string {
  return value === null ? '—' : `${(value * 100).toFixed(1)}%`;
}

/** One license at capacity: what it is, its summary, its chart, and its numbers folded below. */
function LicensePanel(props: { context: ConsoleContext; bucket: Bucket; chart: LicenseChart }) {
  const { t } = props.context;
  const { line, points } = props.chart;
  return (
    <ChartPanel
      className="usage-license"
      product={line.product}
      compact
      title={`${line.product} ${line.assetNum}: ${t('usage.seatsChart')}`}
      caption={t('usage.seatsChart')}
      times={timesOf(points, props.bucket)}
      series={seatSeries(t, points)}
      heading={
        <>
          <h3>
            <code>{line.product}</code>
          </h3>
          <p class="note">
            {t('usage.licenseSummary', {
              asset: line.assetNum,
              enterprise: line.enterpriseName ?? '—',
              peak: line.peakSeats,
              licensed: line.licensedSeats ?? t('usage.ent.unlimited'),
              full: line.bucketsAtCapacity,
              buckets: points.length,
              utilization: percent(line.utilization),
            })}
          </p>
        </>
      }
      table={
        <PointsTable<LicensePoint>
          context={props.context}
          bucket={props.bucket}
          points={points}
          columns={seatColumns<LicensePoint>(t)}
        />
      }
    />
  );
}

/**
 * Saturation first: each license at capacity as a small chart of its own (the platform's sum of
 * every license would hide one stuck at its seats), the most often full first.
 */
export function SaturatedCharts(props: { context: ConsoleContext; report: SaturationReport }) {
  const { t } = props.context;
  const { report } = props;
  return (
    <section class="usage saturated">
      <h2>{t('usage.atCapacity')}</h2>
      {report.saturated.length === 0 ? (
        <Empty>{t('usage.atCapacityNone')}</Empty>
      ) : (
        <>
          <p class="note">{t('usage.atCapacityIntro')}</p>
          <div class="chart-grid">
            {report.saturated.map((chart) => (
              <LicensePanel context={props.context} bucket={report.bucket} chart={chart} />
            ))}
          </div>
        </>
      )}
    </section>
  );
}

/**
 * The platform's total over every license the filter takes, apart: seats against licensed, and
 * refused check-outs; below them one table of every number of the series.
 */
export function PlatformCharts(props: { context: ConsoleContext; report: UsageReport; csvHref: string }) {
  const { t } = props.context;
  const { report } = props;
  const series = report.series;
  const times = timesOf(series, report.bucket);
  return (
    <UsageSection
      context={props.context}
      className="platform"
      heading={t('usage.platform')}
      intro={t('usage.platformIntro')}
      csvHref={props.csvHref}
      empty={false}
      panels={
        <>
          <ChartPanel title={t('usage.seatsChart')} times={times} series={seatSeries(t, series)} />
          <ChartPanel
            title={t('usage.deniedChart')}
            times={times}
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
        note={t('usage.utilizationDefined')}
      />
    </UsageSection>
  );
}

/** Characters of a product's id on screen; the whole one on hover. */
const PRODUCT_CHARS = 24;

export function LicenseTable(props: {
  context: ConsoleContext;
  title: string;
  lines: LicenseLine[];
  kind: string;
  /** Under the heading: what the list leaves out, and what its utilization is. */
  intro?: string;
}) {
  const { t } = props.context;
  return (
    <section class={`licenses ${props.kind}`}>
      <h2>{props.title}</h2>
      {props.intro !== undefined && <p class="note">{props.intro}</p>}
      {props.lines.length === 0 ? (
        <Empty>{t('usage.none')}</Empty>
      ) : (
        <DataTable
          context={props.context}
          rows={props.lines}
          columns={[
            { kind: 'code', header: t('usage.product'), value: (l) => l.product, max: PRODUCT_CHARS },
            {
              kind: 'id',
              header: t('usage.assetNum'),
              value: (l) => l.assetNum,
              href: (l) => operatorLinks.asset(l.assetNum),
            },
            { kind: 'text', header: t('usage.enterpriseColumn'), render: (l) => l.enterpriseName ?? '—' },
            { kind: 'number', header: t('usage.licensed'), value: (l) => l.licensedSeats },
            { kind: 'number', header: t('usage.peak'), value: (l) => l.peakSeats },
            { kind: 'number', header: t('usage.utilization'), value: (l) => percent(l.utilization) },
            { kind: 'number', header: t('usage.bucketsAtCapacity'), value: (l) => l.bucketsAtCapacity },
          ]}
        />
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
