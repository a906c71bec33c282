import type { ComponentChildren } from 'preact';
import type { Bucket } from '../../../domain/usage/usage.repository.js';
import type { ConsoleContext } from '../context.js';
import type { Translate } from '../i18n/index.js';
import { DataTable, Empty, type Column as DataColumn } from '../ui.js';
import { LineChart, type ChartSeries } from './chart.js';

/**
 * The parts both Usage pages are made of (the operator's and an enterprise's): the section with
 * its CSV link and its grid of charts, a chart's panel, and the table of the very numbers a chart
 * draws. Each page only says which charts and which columns.
 */

/** A bucket's time as the tables and the charts' axes write it (UTC). */
export function when(at: number, bucket: Bucket): string {
  const iso = new Date(at).toISOString();
  return bucket === 'hour' ? `${iso.slice(0, 13)}:00` : iso.slice(0, 10);
}

/** Each bucket's time: the first and last under a chart's axis, each on hover over its point. */
export function timesOf(points: ReadonlyArray<{ at: number }>, bucket: Bucket): string[] {
  return points.map((p) => when(p.at, bucket));
}

/** The points every usage series has: seats at their peak against seats licensed. */
export interface SeatPoint {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
}

/** Peak seats against seats licensed: the chart each page draws first (a gap where unlimited). */
export function seatSeries(t: Translate, points: readonly SeatPoint[]): ChartSeries[] {
  return [
    { name: t('usage.series.peak'), className: 'peak', values: points.map((p) => p.peakSeats) },
    { name: t('usage.series.licensed'), className: 'licensed', values: points.map((p) => p.licensedSeats) },
  ];
}

/** A column of a points table; `className` marks the cells a test reads back against the chart. */
export interface Column<P> {
  label: string;
  className?: string;
  cell: (point: P) => string | number;
}

/** The columns every points table has, in this order: peak, licensed, seat-hours. */
export function seatColumns<P extends SeatPoint>(t: Translate): Array<Column<P>> {
  return [
    { label: t('usage.series.peak'), className: 'peak', cell: (p) => p.peakSeats },
    { label: t('usage.series.licensed'), className: 'licensed', cell: (p) => p.licensedSeats ?? '—' },
    { label: t('usage.seatHours'), cell: (p) => p.seatHours },
  ];
}

export function deniedColumn<P extends SeatPoint & { denied: number }>(t: Translate): Column<P> {
  return { label: t('usage.series.denied'), className: 'denied', cell: (p) => p.denied };
}

/** The numbers a chart draws, folded under it as a table (for a screen reader, and to copy). */
export function PointsTable<P extends { at: number }>(props: {
  context: ConsoleContext;
  bucket: Bucket;
  points: readonly P[];
  columns: ReadonlyArray<Column<P>>;
  /** Under the table: what one of its columns means. */
  note?: string;
}) {
  const { t } = props.context;
  return (
    <details class="table-view">
      <summary>{t('usage.tableView')}</summary>
      <DataTable
        context={props.context}
        className="usage-table"
        rows={props.points}
        row={(p) => ({ 'data-at': p.at })}
        columns={[
          // A bucket's hour or day, UTC as the header says: one line.
          { kind: 'code', header: t('usage.at'), className: 'at', value: (p) => when(p.at, props.bucket) },
          ...props.columns.map((c): DataColumn<P> => ({
            kind: 'number',
            header: c.label,
            className: c.className,
            value: c.cell,
          })),
        ]}
      />
      {props.note !== undefined && <p class="note">{props.note}</p>}
    </details>
  );
}

/** One chart of the grid, with what the page says above it and the table below it. */
export function ChartPanel(props: {
  title: string;
  series: readonly ChartSeries[];
  times: readonly string[];
  /** Above the chart: the product's name and its summary, on the enterprise's page. */
  heading?: ComponentChildren;
  table?: ComponentChildren;
  className?: string;
  product?: string;
  /** A shorter chart, where a page draws one per product. */
  compact?: boolean;
  /** The caption's words, where the title repeats the heading above the chart. */
  caption?: string;
}) {
  return (
    <section
      class={props.className === undefined ? 'chart-panel' : `chart-panel ${props.className}`}
      data-product={props.product}
    >
      {props.heading}
      <LineChart
        title={props.title}
        caption={props.caption}
        series={props.series}
        times={props.times}
        compact={props.compact}
      />
      {props.table}
    </section>
  );
}

/**
 * A page's usage: its heading, the CSV of the same filter and range, the charts two a row where
 * the page is wide enough (console.css), and what follows them (the operator's whole table).
 */
export function UsageSection(props: {
  context: ConsoleContext;
  heading?: string;
  /** Under the heading: what the section adds up. */
  intro?: string;
  /** Beside `usage`: what the section is (the operator's `platform` total). */
  className?: string;
  csvHref: string;
  /** Nothing to draw: the section says so instead. */
  empty: boolean;
  panels: ComponentChildren;
  children?: ComponentChildren;
}) {
  const { t } = props.context;
  return (
    <section class={props.className === undefined ? 'usage' : `usage ${props.className}`}>
      {props.heading !== undefined && <h2>{props.heading}</h2>}
      {props.intro !== undefined && <p class="note">{props.intro}</p>}
      {props.empty ? (
        <Empty>{t('usage.none')}</Empty>
      ) : (
        <>
          <p>
            <a href={props.csvHref} download>
              {t('usage.csv')}
            </a>
          </p>
          <div class="chart-grid">{props.panels}</div>
          {props.children}
        </>
      )}
    </section>
  );
}
