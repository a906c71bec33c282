/**
 * A line chart drawn on the server as SVG, so the page needs no script under the CSP. Hand-written
 * on purpose: a few polylines over a fixed grid; the charting libraries that fit a strict CSP draw
 * on a canvas in the browser (uPlot), which would need a script and leave nothing to test server-side.
 */
export interface ChartSeries {
  name: string;
  /** `null` where the series has no value (unlimited seats): the line breaks there. */
  values: ReadonlyArray<number | null>;
  className: string;
}

const WIDTH = 720;
const HEIGHT = 180;
const PAD = 28;

function scaleOf(series: readonly ChartSeries[]): number {
  const max = Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null)));
  return max;
}

/** The path of one series: `M` at each run's first point, `L` on; nulls break the line. */
export function pathOf(values: ReadonlyArray<number | null>, max: number): string {
  const step = values.length > 1 ? (WIDTH - 2 * PAD) / (values.length - 1) : 0;
  let path = '';
  let drawing = false;
  values.forEach((value, i) => {
    if (value === null) {
      drawing = false;
      return;
    }
    const x = (PAD + i * step).toFixed(1);
    const y = (HEIGHT - PAD - (value / max) * (HEIGHT - 2 * PAD)).toFixed(1);
    path += `${drawing ? 'L' : 'M'}${x} ${y}`;
    drawing = true;
  });
  return path;
}

export function LineChart(props: { title: string; series: readonly ChartSeries[] }) {
  const max = scaleOf(props.series);
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-label={props.title}
        data-series-count={props.series.length}
      >
        <title>{props.title}</title>
        <line
          x1={PAD}
          y1={HEIGHT - PAD}
          x2={WIDTH - PAD}
          y2={HEIGHT - PAD}
          class="axis"
          stroke="currentColor"
        />
        <text x={2} y={PAD} font-size="10" fill="currentColor">
          {max}
        </text>
        {props.series.map((s) => (
          <path
            d={pathOf(s.values, max)}
            class={`series ${s.className}`}
            data-series={s.name}
            fill="none"
            stroke="currentColor"
            stroke-width="2"
          />
        ))}
      </svg>
      <figcaption>
        {props.title}:{' '}
        {props.series.map((s, i) => (
          <span class={`legend ${s.className}`}>
            {i > 0 && ' · '}
            {s.name}
          </span>
        ))}
      </figcaption>
    </figure>
  );
}
