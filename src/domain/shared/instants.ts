/**
 * The times a timestamp column takes as the drivers write them (ISO 8601): the years 1 to 9999.
 * PostgreSQL refuses the ISO year 0000 and anything earlier, though a date-time format (and Date)
 * accepts them; a filter or range reaching the database must be checked against this first.
 */
const EARLIEST_MS = Date.parse('0001-01-01T00:00:00Z');
const LATEST_MS = Date.parse('9999-12-31T23:59:59.999Z');

/** How a refusal words the range, after the field's name. */
export const STORABLE_INSTANTS = 'a time from 0001-01-01 to 9999-12-31';

/** Whether `date` is a time the database can hold; an invalid Date is not. */
export function isStorableInstant(date: Date): boolean {
  const ms = date.getTime();
  return ms >= EARLIEST_MS && ms <= LATEST_MS;
}
