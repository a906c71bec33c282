import { isStorableInstant } from '../../../domain/shared/instants.js';

/**
 * A datetime-local value (no zone) read as UTC, as every time on the console is shown: undefined
 * when empty, 'bad' when it is not a date and time. A day the month lacks (February 31) is bad too:
 * Date would quietly roll it into the next month; so is a time the database cannot hold (year 0).
 */
export function utcInstantOf(value: string): Date | undefined | 'bad' {
  if (value === '') return undefined;
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,3})?)?$/.test(value)) return 'bad';
  const date = new Date(`${value}Z`);
  if (!isStorableInstant(date)) return 'bad';
  return date.toISOString().startsWith(value) ? date : 'bad';
}
