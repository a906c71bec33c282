import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';

/** One kind of request a scenario sends; path and body are built again for every request. */
export interface RequestShape {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Path and query without g_nonce. */
  path: () => string;
  headers?: Record<string, string>;
  body?: () => string;
  /** Keyward calls carry a fresh g_nonce each; R1 takes none. */
  nonce?: boolean;
  /** Whether an answer counts as a success: by default HTTP 200 with business code 0. */
  accept?: (status: number, body: string) => boolean;
}

export interface LoadPlan {
  connections: number;
  /** Measure for this long, or … */
  seconds?: number;
  /** … for exactly this many requests. */
  amount?: number;
  warmupSeconds?: number;
  warmupAmount?: number;
  /** Runs between the warm-up and the measured run. */
  beforeMeasured?: () => Promise<void>;
}

export interface Measured {
  requests: number;
  seconds: number;
  requestsPerSecond: number;
  /** Milliseconds, from every answer's own timing (autocannon's histogram keeps whole ms only). */
  p50: number;
  p99: number;
  mean: number;
}

export function freshNonce(): string {
  return randomBytes(12).toString('base64url');
}

const isSuccess = (status: number, body: string) => status === 200 && body.startsWith('{"code":0,');

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] as number;
}

export function summarize(times: number[], seconds: number): Measured {
  const sorted = [...times].sort((a, b) => a - b);
  return {
    requests: sorted.length,
    seconds,
    requestsPerSecond: sorted.length / seconds,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean: sorted.reduce((s, t) => s + t, 0) / Math.max(1, sorted.length),
  };
}

async function drive(
  url: string,
  shape: RequestShape,
  connections: number,
  limit: { seconds: number } | { amount: number },
): Promise<Measured> {
  const accept = shape.accept ?? isSuccess;
  const times: number[] = [];
  let failures = 0;
  let firstFailure = '';
  const started = process.hrtime.bigint();
  let finish!: (result: autocannon.Result) => void;
  let fail!: (error: unknown) => void;
  const done = new Promise<autocannon.Result>((resolve, reject) => {
    finish = resolve;
    fail = reject;
  });
  const options: autocannon.Options = {
    url,
    connections,
    timeout: 60,
    ...('seconds' in limit ? { duration: limit.seconds } : { amount: limit.amount }),
    requests: [
      {
        method: shape.method,
        ...(shape.headers === undefined ? {} : { headers: shape.headers }),
        setupRequest: (request) => {
          const path = shape.path();
          const query =
            shape.nonce === false ? '' : `${path.includes('?') ? '&' : '?'}g_nonce=${freshNonce()}`;
          return {
            ...request,
            path: `${path}${query}`,
            ...(shape.body === undefined ? {} : { body: shape.body() }),
          };
        },
        onResponse: (status, body) => {
          if (accept(status, body)) return;
          failures += 1;
          if (firstFailure === '') firstFailure = `HTTP ${status} ${body.slice(0, 300)}`;
        },
      },
    ],
  };
  const instance = autocannon(options, (error, result) => (error ? fail(error) : finish(result)));
  let last = started;
  instance.on('response', (_client, _status, _bytes, responseTime) => {
    times.push(responseTime);
    last = process.hrtime.bigint();
  });
  const result = await done;
  // autocannon ends a run on its one-second tick; the rate counts up to the last answer.
  const seconds = Number(last - started) / 1e9;
  if (failures > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new Error(
      `${failures} failed answers, ${result.errors} errors, ${result.timeouts} timeouts; first: ${firstFailure}`,
    );
  }
  return summarize(times, seconds);
}

/** A warm-up whose numbers are dropped, then the measured run. */
export async function measure(url: string, shape: RequestShape, plan: LoadPlan): Promise<Measured> {
  if (plan.warmupSeconds !== undefined && plan.warmupSeconds > 0) {
    await drive(url, shape, plan.connections, { seconds: plan.warmupSeconds });
  }
  if (plan.warmupAmount !== undefined && plan.warmupAmount > 0) {
    await drive(url, shape, plan.connections, { amount: plan.warmupAmount });
  }
  await plan.beforeMeasured?.();
  if (plan.amount !== undefined) return drive(url, shape, plan.connections, { amount: plan.amount });
  return drive(url, shape, plan.connections, { seconds: plan.seconds ?? 10 });
}
