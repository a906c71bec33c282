import { AUDIT_ACTIONS } from '../../../domain/audit/audit-actions.js';
import type { AuditRecord } from '../../../domain/audit/audit.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { DataTable, Empty, Field, Ident, type ConsoleError } from '../ui.js';
import { operatorLinks } from './links.js';
import { auditQueryString, parseAuditQuery, type AuditQuery } from './audit-filter.js';
import { csvLine } from './csv.js';
import { operatorMay } from '../../access/access.js';

const AUDIT = '/console/operator/audit';
const PAGE_SIZE = 50;
/** Characters of an id (an enterprise's, a request's) on screen, and of a subject (an email). */
const ID_CHARS = 14;
const REQUEST_CHARS = 10;
const SUBJECT_CHARS = 20;
/** An app key is shown whole (`kw_` and 16 characters). */
const APP_KEY_CHARS = 20;
/** Rows one CSV export holds at most; narrow the filters (or use `keyward audit`) for more. */
export const CSV_MAX_ROWS = 10_000;
const CSV_CHUNK = 1000;

const CSV_HEADER = [
  'id',
  'created_at',
  'action',
  'subject',
  'enterprise',
  'app_id',
  'operator',
  'operator_id',
  'request_id',
  'client_request_id',
  'detail',
];

function csvRow(row: AuditRecord): string {
  return csvLine([
    row.id,
    new Date(row.createdAt).toISOString(),
    row.action,
    row.subject,
    row.enterpriseId,
    row.appId,
    row.operator,
    row.operatorId,
    row.requestId,
    row.clientRequestId,
    JSON.stringify(row.detail),
  ]);
}

/**
 * Who made the change: the operator by name, linked to the operator's page (which has the id that
 * stays if the name changes); else the app by its key, linked, and its name (its id if gone).
 */
function Actor(props: {
  context: ConsoleContext;
  operator: string | null;
  operatorId: string | null;
  appId: string | null;
  apps: Map<string, { appKey: string; name: string }>;
}) {
  const { context, operator, operatorId, appId, apps } = props;
  if (operator !== null && operatorId !== null)
    return (
      <a href={operatorLinks.operator(operatorId)} data-operator-id={operatorId}>
        {operator}
      </a>
    );
  if (operator !== null) return <>{operator}</>;
  if (appId === null) return <>—</>;
  const found = apps.get(appId);
  if (found === undefined) return <Ident context={context} value={appId} max={ID_CHARS} />;
  return (
    <>
      <span data-app-key={found.appKey}>
        <Ident
          context={context}
          value={found.appKey}
          href={operatorLinks.app(found.appKey)}
          max={APP_KEY_CHARS}
        />
      </span>
      <small class="sub">{found.name}</small>
    </>
  );
}

/** The log's page as a table: every identifier on one line, the detail folded. */
function AuditTable(props: {
  context: ConsoleContext;
  rows: AuditRecord[];
  apps: Map<string, { appKey: string; name: string }>;
}) {
  const { context, apps } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="audit"
      rows={props.rows}
      row={(row) => ({ 'data-action': row.action })}
      columns={[
        { kind: 'number', header: t('audit.id'), value: (row) => row.id },
        {
          // The request that made the change under its time: one column less, so the log fits.
          kind: 'time',
          header: t('audit.time'),
          subHeader: t('audit.request'),
          value: (row) => row.createdAt,
          sub: (row) =>
            row.requestId !== null && <Ident context={context} value={row.requestId} max={REQUEST_CHARS} />,
        },
        { kind: 'code', header: t('audit.action'), className: 'action', value: (row) => row.action },
        { kind: 'id', header: t('audit.subject'), value: (row) => row.subject, max: SUBJECT_CHARS },
        {
          kind: 'id',
          header: t('audit.enterprise'),
          value: (row) => row.enterpriseId,
          href: (row) => (row.enterpriseId === null ? undefined : operatorLinks.enterprise(row.enterpriseId)),
          max: ID_CHARS,
        },
        {
          kind: 'text',
          header: t('audit.operator'),
          className: 'actor',
          render: (row) => (
            <Actor
              context={context}
              operator={row.operator}
              operatorId={row.operatorId}
              appId={row.appId}
              apps={apps}
            />
          ),
        },
        { kind: 'json', header: t('audit.detail'), className: 'detail', value: (row) => row.detail },
      ]}
    />
  );
}

/** GET /console/operator/audit and /audit.csv: `GET /admin/audit`'s filters, as a page or a file. */
export function auditRoutes(app: App): void {
  app.get<{ Querystring: AuditQuery }>(
    '/operator/audit',
    { config: { access: operatorMay('audit') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const { filter, form, badTimes } = parseAuditQuery(request.query);
      const error: ConsoleError | undefined =
        badTimes[0] === undefined ? undefined : { message: t('audit.badTime'), field: badTimes[0] };
      const rows =
        error === undefined ? await app.services.audit.list({ ...filter, limit: PAGE_SIZE + 1 }) : [];
      const page = rows.slice(0, PAGE_SIZE);
      const last = page.at(-1);
      // A row made by an app keeps its id: the page names the app by its key and name.
      const apps = await app.services.apps.namesOf(
        page.flatMap((row) => (row.operator === null && row.appId !== null ? [row.appId] : [])),
      );
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.audit')}>
          <form method="get" action={AUDIT} class="filters">
            <Field name="enterprise" label={t('audit.enterprise')} value={form.enterprise} maxLength={200} />
            <Field name="app" label={t('audit.app')} value={form.app} maxLength={200} />
            <p class="field">
              <label for="field-action">{t('audit.action')}</label>
              <select id="field-action" name="action">
                <option value="">{t('audit.anyAction')}</option>
                {AUDIT_ACTIONS.map((action) => (
                  <option value={action} selected={action === form.action}>
                    {action}
                  </option>
                ))}
              </select>
            </p>
            <Field
              name="since"
              label={t('audit.since')}
              type="datetime-local"
              value={form.since}
              error={error}
            />
            <Field
              name="until"
              label={t('audit.until')}
              type="datetime-local"
              value={form.until}
              error={error}
            />
            <Field name="subject" label={t('audit.subject')} value={form.subject} maxLength={200} />
            <p>
              <button type="submit">{t('audit.filter')}</button>{' '}
              <a href={`${AUDIT}.csv?${auditQueryString(form)}`} download>
                {t('audit.csv')}
              </a>
            </p>
          </form>
          {page.length === 0 ? (
            <Empty>{t('audit.empty')}</Empty>
          ) : (
            <AuditTable context={context} rows={page} apps={apps} />
          )}
          <nav class="pager">
            {filter.before !== undefined ? (
              <a href={`${AUDIT}?${auditQueryString(form)}`}>{t('audit.newest')}</a>
            ) : (
              <span />
            )}
            {rows.length > PAGE_SIZE && last !== undefined ? (
              <a href={`${AUDIT}?${auditQueryString(form, { before: String(last.id) })}`}>
                {t('audit.older')}
              </a>
            ) : (
              <span />
            )}
          </nav>
        </Layout>,
      );
    },
  );

  app.get<{ Querystring: AuditQuery }>(
    '/operator/audit.csv',
    { config: { access: operatorMay('audit') } },
    async (request, reply) => {
      // The whole platform's log: never without the operator's session (the route's access).
      operatorContext(request);
      const { filter, badTimes } = parseAuditQuery(request.query);
      let body = csvLine(CSV_HEADER);
      if (badTimes.length === 0) {
        // Page by id through the same query as the page, a chunk at a time, up to the cap.
        let before = filter.before;
        for (let taken = 0; taken < CSV_MAX_ROWS;) {
          const rows = await app.services.audit.list({
            ...filter,
            ...(before === undefined ? {} : { before }),
            limit: Math.min(CSV_CHUNK, CSV_MAX_ROWS - taken),
          });
          for (const row of rows) body += csvRow(row);
          taken += rows.length;
          const last = rows.at(-1);
          if (last === undefined || rows.length < CSV_CHUNK) break;
          before = last.id;
        }
      }
      const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="keyward-audit-${stamp}.csv"`)
        .header('cache-control', 'no-store')
        .send(body);
    },
  );
}
