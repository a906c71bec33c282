/**
 * When a runtime call (`/runtime/v1/…`: check-out, heartbeat, consume, check-in) is sent again: when
 * no answer came (the connection was refused, reset or closed, or it failed before an answer) and
 * when the server answered HTTP 429 (rate limited) or 503 (overloaded). A refusal is never sent
 * again: an envelope with a business code (HTTP 299), any other 4xx, a 500. Each attempt carries a
 * fresh `g_nonce`; a consume keeps one `Idempotency-Key` across its attempts, so the server counts
 * it once however many of them reached it.
 */
export interface RetryPolicy {
  /** Attempts in all, the first included (4); 1 sends each call once. */
  maxAttempts: number;
  /** Retry n waits a random time in [0, initialBackoffMs·2ⁿ⁻¹] ("full jitter") (500) … */
  initialBackoffMs: number;
  /** … at most this (8000). */
  maxBackoffMs: number;
  /** A longer `Retry-After` is cut to this (30000). */
  maxRetryAfterMs: number;
  /** No retry whose wait would end later than this after the call began (60000). */
  maxElapsedMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  initialBackoffMs: 500,
  maxBackoffMs: 8000,
  maxRetryAfterMs: 30_000,
  maxElapsedMs: 60_000,
});

/** A new `Idempotency-Key`: 128 bits from the platform's CSPRNG, base64url (22 characters). */
export function newIdempotencyKey(): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** `Retry-After` in milliseconds (delta-seconds or an HTTP date); undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** The wait before retry number `retry` (1 for the first). */
export function waitBefore(policy: RetryPolicy, retry: number, retryAfter: number | undefined): number {
  const ceiling = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * 2 ** Math.min(retry - 1, 30));
  const jittered = Math.random() * ceiling;
  return retryAfter === undefined
    ? jittered
    : Math.max(Math.min(retryAfter, policy.maxRetryAfterMs), jittered);
}

const RETRIED_STATUSES = new Set([429, 503]);

/**
 * A fetch that sends a runtime call again as `policy` says, each attempt with a fresh `g_nonce`
 * (`nonce()`); other calls go through once.
 */
export function retryingFetch(
  fetchImpl: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
  nonce: () => string,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): (request: Request) => Promise<Response> {
  return async (request) => {
    const url = new URL(request.url);
    if (!url.pathname.includes('/runtime/v1/') || policy.maxAttempts <= 1) return fetchImpl(request);
    const body = request.body === null ? undefined : await request.text();
    const started = Date.now();
    for (let attempt = 1; ; attempt += 1) {
      url.searchParams.set('g_nonce', nonce());
      const sent = new Request(url, {
        method: request.method,
        headers: request.headers,
        body,
        signal: request.signal,
      });
      let answer: Response | undefined;
      let failure: unknown;
      try {
        answer = await fetchImpl(sent);
      } catch (error) {
        // The caller's abort is an answer of its own: not a failure to retry.
        if (request.signal.aborted) throw error;
        failure = error;
      }
      if (answer !== undefined && !RETRIED_STATUSES.has(answer.status)) return answer;
      if (attempt >= policy.maxAttempts) return finish(answer, failure);
      const wait = waitBefore(policy, attempt, retryAfterMs(answer?.headers.get('retry-after') ?? null));
      if (Date.now() - started + wait > policy.maxElapsedMs) return finish(answer, failure);
      await answer?.body?.cancel();
      await sleep(wait);
    }
  };
}

function finish(answer: Response | undefined, failure: unknown): Response {
  if (answer !== undefined) return answer;
  throw failure;
}
