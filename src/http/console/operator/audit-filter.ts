import { AUDIT_ACTIONS, type AuditAction } from '../../../domain/audit/audit-actions.js';
import type { AuditFilter } from '../../../domain/audit/audit.repository.js';
import { utcInstantOf } from './utc-time.js';
import { queryText } from '../form-fields.js';

/** The audit page's and CSV's query: every field optional, as the form sends it. */
export interface AuditQuery {
  enterprise?: string;
  app?: string;
  action?: string;
  since?: string;
  until?: string;
  subject?: string;
  before?: string;
}

export interface ParsedAuditQuery {
  filter: Omit<AuditFilter, 'limit'>;
  /** The form's values, to show again. */
  form: Record<'enterprise' | 'app' | 'action' | 'since' | 'until' | 'subject', string>;
  /** The time fields that are not a date and time. */
  badTimes: Array<'since' | 'until'>;
}

const text = (value: unknown, max = 200) => queryText(value, max);

const isAction = (value: string): value is AuditAction =>
  (AUDIT_ACTIONS as readonly string[]).includes(value);

/** The filters of `GET /admin/audit`, from the console's form fields. */
export function parseAuditQuery(query: AuditQuery): ParsedAuditQuery {
  const form = {
    enterprise: text(query.enterprise),
    app: text(query.app),
    action: text(query.action),
    since: text(query.since, 40),
    until: text(query.until, 40),
    subject: text(query.subject),
  };
  const filter: Omit<AuditFilter, 'limit'> = {};
  if (form.enterprise !== '') filter.enterprise = form.enterprise;
  if (form.app !== '') filter.app = form.app;
  if (isAction(form.action)) filter.action = form.action;
  if (form.subject !== '') filter.subject = form.subject;
  const badTimes: Array<'since' | 'until'> = [];
  for (const name of ['since', 'until'] as const) {
    const instant = utcInstantOf(form[name]);
    if (instant === 'bad') badTimes.push(name);
    else if (instant !== undefined) filter[name] = instant;
  }
  const before = Number.parseInt(text(query.before, 20), 10);
  if (Number.isSafeInteger(before) && before > 0) filter.before = before;
  return { filter, form, badTimes };
}

/** The query string of these filters, for links and the CSV export. */
export function auditQueryString(form: ParsedAuditQuery['form'], extra: Record<string, string> = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries({ ...form, ...extra }))
    if (value !== '') params.set(name, value);
  return params.toString();
}
