import type { FastifyReply } from 'fastify';
import { DAY_MS, HOUR_MS, UsageInputError } from '../../../domain/usage/usage-range.js';
import type { Bucket } from '../../../domain/usage/usage.repository.js';
import { queryText } from '../form-fields.js';

/** The usage pages' query string, as typed: blank fields mean "any" (or the default range). */
export interface UsagePageQuery {
  product?: string;
  enterprise?: string;
  app?: string;
  bucket?: string;
  from?: string;
  to?: string;
}

/** The form's values, to show again and to carry into the CSV link. */
export interface UsageForm {
  product: string;
  enterprise: string;
  /** An app's key, or a relay's id for the usage it reported (the operator's page only). */
  app: string;
  bucket: Bucket;
  /** UTC days, `YYYY-MM-DD`, as `<input type="date">` sends them; '' for the default. */
  from: string;
  to: string;
}

export type DateField = 'from' | 'to';

export interface ParsedUsageQuery {
  form: UsageForm;
  /** The range to ask for: `to` is the last millisecond of its day, so that day counts whole. */
  range: { from?: Date; to?: Date };
  /** The first date field that is not a day. */
  badDate: DateField | undefined;
}

/**
 * A `YYYY-MM-DD` day read as UTC midnight: undefined when empty, 'bad' when it is not a day (a day
 * the month lacks, February 30, too: Date would roll it into the next month).
 */
export function utcDayOf(value: string): Date | undefined | 'bad' {
  if (value === '') return undefined;
  if (!/^\d{4}-\d\d-\d\d$/.test(value)) return 'bad';
  const day = new Date(`${value}T00:00:00Z`);
  if (Number.isNaN(day.getTime())) return 'bad';
  return day.toISOString().startsWith(value) ? day : 'bad';
}

export function parseUsageQuery(query: UsagePageQuery): ParsedUsageQuery {
  const form: UsageForm = {
    product: queryText(query.product, 255),
    enterprise: queryText(query.enterprise, 255),
    app: queryText(query.app, 100),
    bucket: query.bucket === 'hour' ? 'hour' : 'day',
    // A date is ten characters: anything longer is not one, and is not kept to be shown again whole.
    from: queryText(query.from, 40),
    to: queryText(query.to, 40),
  };
  const range: ParsedUsageQuery['range'] = {};
  let badDate: DateField | undefined;
  for (const field of ['from', 'to'] as const) {
    const day = utcDayOf(form[field]);
    if (day === 'bad') badDate ??= field;
    else if (day !== undefined) range[field] = field === 'to' ? new Date(day.getTime() + DAY_MS - 1) : day;
  }
  return { form, range, badDate };
}

/** The form as a query string, for the CSV link: the same filter and range as the page. */
export function usageQueryString(form: UsageForm, fields: ReadonlyArray<keyof UsageForm>): string {
  const params = new URLSearchParams();
  for (const name of fields) if (form[name] !== '') params.set(name, form[name]);
  return params.toString();
}

/** What a page shows: the numbers read, or the field to fix. */
export type UsageRead<T> =
  { data: T; problem?: undefined } | { data?: undefined; problem: DateField | UsageInputError };

/**
 * The most hours a page (or its CSV) draws: each is a point of every chart and a row of every
 * table, and the enterprise page has a chart and a table per product, so a year of hours would be
 * tens of megabytes of page. A longer hourly range is for `GET /admin/usage`; per day a page takes
 * a year and more.
 */
export const PAGE_MAX_HOURS = 31 * 24;

function pageHoursRefusal(parsed: ParsedUsageQuery, nowMs: number): UsageInputError | undefined {
  const { from, to } = parsed.range;
  if (parsed.form.bucket !== 'hour' || from === undefined) return undefined;
  const hours = Math.ceil(((to?.getTime() ?? nowMs) - from.getTime()) / HOUR_MS);
  return hours > PAGE_MAX_HOURS
    ? new UsageInputError('from', `at most ${PAGE_MAX_HOURS} hours on a page`, 'too-long', PAGE_MAX_HOURS)
    : undefined;
}

/**
 * Reads with the parsed range unless a date is not a day or the hours are too many for a page; the service's refusal of the filter (a
 * reversed or too long range, an unknown name) comes back to be shown, never as a failure.
 */
export async function readUsage<T>(
  parsed: ParsedUsageQuery,
  read: (range: ParsedUsageQuery['range']) => Promise<T>,
  nowMs: number = Date.now(),
): Promise<UsageRead<T>> {
  if (parsed.badDate !== undefined) return { problem: parsed.badDate };
  const tooManyHours = pageHoursRefusal(parsed, nowMs);
  if (tooManyHours !== undefined) return { problem: tooManyHours };
  try {
    return { data: await read(parsed.range) };
  } catch (error) {
    if (!(error instanceof UsageInputError)) throw error;
    return { problem: error };
  }
}

/**
 * A page's CSV export: the numbers read, or the filter refused (400) in plain text naming the
 * field, as `GET /admin/usage` would.
 */
export function sendUsageCsv<T>(
  reply: FastifyReply,
  read: UsageRead<T>,
  csvOf: (data: T) => string,
): FastifyReply {
  if (read.problem !== undefined) {
    const { problem } = read;
    const said = problem instanceof UsageInputError ? problem.message : `${problem}: not a day (YYYY-MM-DD)`;
    return reply.code(400).type('text/plain; charset=utf-8').send(said);
  }
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="keyward-usage-${stamp}.csv"`)
    .header('cache-control', 'no-store')
    .send(csvOf(read.data));
}
