/**
 * A line chart drawn on the server as SVG, so the page needs no script under the CSP. Hand-written
 * on purpose: a few polylines over a fixed grid; the charting libraries that fit a strict CSP draw
 * on a canvas in the browser (uPlot), which would need a script and leave nothing to test server-side.
 * Colours are presentation attributes (not style attributes, which the CSP refuses), one per kind
 * of series, so a chart reads the same wherever it is drawn.
 */
export interface ChartSeries {
  name: string;
  /** `null` where the series has no value (unlimited seats): the line breaks there. */
  values: ReadonlyArray<number | null>;
  className: string;
}

/** Drawn about as wide as a panel of the usage pages' two-a-row grid, so its text reads at 11 px. */
const WIDTH = 480;
const HEIGHT = 180;
const PAD = 28;

/** The colour of each kind of series; a kind not listed is drawn in the text's colour. */
const COLOURS: Record<string, string> = {
  peak: '#2563eb',
  licensed: '#6b7280',
  denied: '#dc2626',
};

function colourOf(className: string): string {
  return COLOURS[className] ?? 'currentColor';
}

function scaleOf(series: readonly ChartSeries[]): number {
  return Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
}

interface Frame {
  width: number;
  height: number;
  pad: number;
}

const CHART: Frame = { width: WIDTH, height: HEIGHT, pad: PAD };
const COMPACT_HEIGHT = 130;

/** The path of one series: `M` at each run's first point, `L` on; nulls break the line. */
export function pathOf(values: ReadonlyArray<number | null>, max: number, frame: Frame = CHART): string {
  const { width, height, pad } = frame;
  const step = values.length > 1 ? (width - 2 * pad) / (values.length - 1) : 0;
  let path = '';
  let drawing = false;
  values.forEach((value, i) => {
    if (value === null) {
      drawing = false;
      return;
    }
    const x = (pad + i * step).toFixed(1);
    const y = (height - pad - (value / max) * (height - 2 * pad)).toFixed(1);
    path += `${drawing ? 'L' : 'M'}${x} ${y}`;
    drawing = true;
  });
  return path;
}

/** A value as a point's hover text says it: none (unlimited seats) as a dash. */
function said(value: number | null | undefined): string {
  return value === null || value === undefined ? '—' : String(value);
}

/**
 * Under each point, a column as tall as the plot holding its time and every series' value in a
 * `<title>`: the browser shows it on hover, with no script (the CSP allows none), and a screen
 * reader reads it. Drawn over the lines, transparent, so the whole column answers the pointer.
 */
function PointColumns(props: { series: readonly ChartSeries[]; times: readonly string[]; frame: Frame }) {
  const { width, height, pad } = props.frame;
  const count = props.times.length;
  const step = count > 1 ? (width - 2 * pad) / (count - 1) : width - 2 * pad;
  return (
    <g class="points">
      {props.times.map((time, i) => {
        const x = count > 1 ? pad + i * step - step / 2 : pad;
        const values = props.series.map((s) => `${s.name}: ${said(s.values[i])}`).join(' · ');
        return (
          <rect
            class="point"
            data-index={i}
            x={x.toFixed(1)}
            y={pad}
            width={step.toFixed(1)}
            height={height - 2 * pad}
            fill="transparent"
          >
            <title>{`${time} — ${values}`}</title>
          </rect>
        );
      })}
    </g>
  );
}

/**
 * A chart with its scale, its first and last times under the axis, a legend in the caption, and
 * each point's values on hover.
 */
export function LineChart(props: {
  title: string;
  series: readonly ChartSeries[];
  /** Each point's time, as the page writes them: the first and last under the axis, all on hover. */
  times: readonly string[];
  /** A shorter chart, for pages that draw one per product. */
  compact?: boolean;
  /** The caption's words before the legend, where the title repeats a heading; else the title. */
  caption?: string;
}) {
  const max = scaleOf(props.series);
  const HEIGHT = props.compact === true ? COMPACT_HEIGHT : CHART.height;
  const frame: Frame = { ...CHART, height: HEIGHT };
  const mid = HEIGHT / 2;
  const first = props.times[0];
  const last = props.times[props.times.length - 1];
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={props.title}
        data-series-count={props.series.length}
      >
        <title>{props.title}</title>
        <line x1={PAD} y1={PAD} x2={WIDTH - PAD} y2={PAD} class="grid" stroke="#d1d5db" stroke-width="1" />
        <line x1={PAD} y1={mid} x2={WIDTH - PAD} y2={mid} class="grid" stroke="#e5e7eb" stroke-width="1" />
        <line
          x1={PAD}
          y1={HEIGHT - PAD}
          x2={WIDTH - PAD}
          y2={HEIGHT - PAD}
          class="axis"
          stroke="currentColor"
        />
        <text x={2} y={PAD + 4} font-size="11" fill="currentColor">
          {max}
        </text>
        <text x={2} y={HEIGHT - PAD + 4} font-size="11" fill="currentColor">
          0
        </text>
        {first !== undefined && last !== undefined && (
          <>
            <text x={PAD} y={HEIGHT - 8} font-size="11" fill="currentColor">
              {first}
            </text>
            <text x={WIDTH - PAD} y={HEIGHT - 8} font-size="11" fill="currentColor" text-anchor="end">
              {last}
            </text>
          </>
        )}
        {props.series.map((s) => (
          <path
            d={pathOf(s.values, max, frame)}
            class={`series ${s.className}`}
            data-series={s.name}
            fill="none"
            stroke={colourOf(s.className)}
            stroke-width="2"
            stroke-dasharray={s.className === 'licensed' ? '6 4' : undefined}
            stroke-linejoin="round"
          />
        ))}
        <PointColumns series={props.series} times={props.times} frame={frame} />
      </svg>
      <figcaption>
        {props.caption ?? props.title}:{' '}
        {props.series.map((s, i) => (
          <span class={`legend ${s.className}`}>
            {i > 0 && ' · '}
            <svg width="18" height="8" viewBox="0 0 18 8" aria-hidden="true">
              <line
                x1="0"
                y1="4"
                x2="18"
                y2="4"
                stroke={colourOf(s.className)}
                stroke-width="2"
                stroke-dasharray={s.className === 'licensed' ? '4 3' : undefined}
              />
            </svg>{' '}
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}

const SPARK: Frame = { width: 120, height: 28, pad: 2 };

/**
 * A dashboard card's trend: one series, no axes, its last value named in the label for a screen
 * reader (the card shows the numbers themselves).
 */
export function Sparkline(props: { label: string; values: readonly number[]; className: string }) {
  const max = Math.max(1, ...props.values);
  return (
    <svg
      class={`sparkline ${props.className}`}
      viewBox={`0 0 ${SPARK.width} ${SPARK.height}`}
      width={SPARK.width}
      height={SPARK.height}
      role="img"
      aria-label={props.label}
      data-series-count={1}
      data-values={props.values.join(',')}
    >
      <title>{props.label}</title>
      <path
        d={pathOf(props.values, max, SPARK)}
        class={`series ${props.className}`}
        fill="none"
        stroke={colourOf(props.className)}
        stroke-width="1.5"
        stroke-linejoin="round"
      />
    </svg>
  );
}
