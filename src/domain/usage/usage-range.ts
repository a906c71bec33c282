import type { Bucket } from './usage.repository.js';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;
/** A year of hours (or of days): what one answer may hold, so one call cannot ask for millions. */
export const MAX_BUCKETS = 366 * 24;

/**
 * The days a range may cover: every bucket end stays a four-digit year, which both database
 * drivers write and PostgreSQL reads (year 0 and year 10000 are refused as out of range).
 */
export const FIRST_DAY = Date.UTC(1970, 0, 1);
export const LAST_DAY = Date.UTC(9998, 11, 31);

/** What is wrong with a filter, so a page can say it in its own language. */
export type UsageProblem = 'reversed' | 'too-long' | 'out-of-range' | 'unknown' | 'invalid';

/** A filter the caller must fix; `field` names it, as the admin API's validation errors do. */
export class UsageInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly problem: UsageProblem = 'invalid',
    /** For 'too-long': the most periods the view allows. */
    readonly limit: number = MAX_BUCKETS,
  ) {
    super(`${field}: ${message}`);
  }
}

export function bucketSize(bucket: Bucket): number {
  return bucket === 'hour' ? HOUR_MS : DAY_MS;
}

export function floorTo(ms: number, bucket: Bucket): number {
  const size = bucketSize(bucket);
  return Math.floor(ms / size) * size;
}

/**
 * The buckets a filter covers, `[from, to)` on bucket boundaries. The bucket `to` falls in is
 * counted whole; none given, the current bucket is the last. No `from`: 30 days, or 48 hours, back.
 * One range for every usage view, so the operator's and the enterprise's pages agree.
 */
export function bucketRange(
  query: { from?: Date | undefined; to?: Date | undefined; bucket: Bucket },
  nowMs: number,
): { from: number; to: number } {
  const { bucket } = query;
  const size = bucketSize(bucket);
  for (const field of ['from', 'to'] as const) {
    const at = query[field]?.getTime();
    if (at !== undefined && (at < FIRST_DAY || at >= LAST_DAY + DAY_MS)) {
      throw new UsageInputError(field, 'must be a day from 1970-01-01 to 9998-12-31', 'out-of-range');
    }
  }
  const to =
    query.to === undefined ? floorTo(nowMs, bucket) + size : floorTo(query.to.getTime() + size - 1, bucket);
  // A default start before the first day (a `to` in January 1970) starts on the first day.
  const from = Math.max(
    FIRST_DAY,
    floorTo(query.from?.getTime() ?? to - (bucket === 'hour' ? 48 : 30) * size, bucket),
  );
  if (from >= to) throw new UsageInputError('from', 'must be before to', 'reversed');
  if ((to - from) / size > MAX_BUCKETS) {
    throw new UsageInputError('from', `at most ${MAX_BUCKETS} ${bucket}s in one answer`, 'too-long');
  }
  return { from, to };
}
