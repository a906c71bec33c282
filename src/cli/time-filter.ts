import { InvalidArgumentError } from 'commander';

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 7 * 86_400_000,
};

/** A date, or a date and time with an optional zone: 2025-01-31, 2025-01-31T12:00, …T12:00:00.5+08:00. */
const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * `--since` and `--until`: an ISO-8601 date-time (local time when it names no zone, a bare date is
 * midnight UTC), or a duration meaning "that long ago" (`90s`, `15m`, `2h`, `7d`, `2w`). Answers
 * the instant as ISO-8601 in UTC, as the admin API takes it.
 */
export function timeFilter(value: string, now: number = Date.now()): string {
  const relative = /^([0-9]{1,9})([smhdw])$/.exec(value.trim());
  if (relative?.[1] !== undefined && relative[2] !== undefined) {
    return new Date(now - Number(relative[1]) * (UNIT_MS[relative[2]] ?? 0)).toISOString();
  }
  const at = ISO_8601.test(value.trim()) ? Date.parse(value.trim()) : Number.NaN;
  if (Number.isNaN(at)) {
    throw new InvalidArgumentError(
      'expected an ISO-8601 date-time (2025-01-31T12:00:00Z) or a time ago (15m, 2h, 7d)',
    );
  }
  return new Date(at).toISOString();
}
