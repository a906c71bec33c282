import type { Translate } from '../i18n/index.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/**
 * A length of time as a person reads it: its two largest units, e.g. "1 h 5 min" or "3 d 2 h";
 * seconds only under a minute. Rounded down, as the runtime bills whole seconds.
 */
export function durationText(t: Translate, ms: number): string {
  const whole = Math.max(0, Math.floor(ms));
  if (whole < MINUTE) return t('duration.s', { n: Math.floor(whole / SECOND) });
  const units: Array<[number, 'duration.d' | 'duration.h' | 'duration.min']> = [
    [DAY, 'duration.d'],
    [HOUR, 'duration.h'],
    [MINUTE, 'duration.min'],
  ];
  const first = units.findIndex(([size]) => whole >= size);
  const parts: string[] = [];
  let rest = whole;
  for (const [size, key] of units.slice(first, first + 2)) {
    const n = Math.floor(rest / size);
    rest -= n * size;
    if (n > 0) parts.push(t(key, { n }));
  }
  return parts.join(' ');
}
