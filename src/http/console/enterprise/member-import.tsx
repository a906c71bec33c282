import type { FastifyRequest } from 'fastify';
import { MAX_USERS_PER_CALL, type AddMembersResult } from '../../../domain/members/members.service.js';
import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { FORM_LIMIT_BYTES, UPLOAD_LIMIT_BYTES } from '../limits.js';
import { sendPage } from '../render.js';
import { Csrf, DataTable, Notice, type ConsoleError } from '../ui.js';
import { parseCsv } from './csv.js';
import { actorOf } from './forms.js';
import { consoleErrorOf, FIELD_LABELS, rowFailure, type MemberField } from './member-errors.js';
import { ACCESS } from '../../access/access.js';

/** Op 1's user fields by the header names a file may use (case does not matter). */
const COLUMNS: Record<string, string> = {
  username: 'userName',
  account: 'userName',
  password: 'password',
  name: 'name',
  departmentid: 'departmentId',
  department: 'departmentId',
  remark: 'remark',
  passwordmobile: 'passwordMobile',
  mobile: 'passwordMobile',
};

interface RowResult {
  line: number;
  userName: string;
  error?: ConsoleError;
}

function ImportPage(props: { context: ConsoleContext; error?: ConsoleError; results?: RowResult[] }) {
  const { context, error, results } = props;
  const { t } = context;
  const added = results?.filter((r) => r.error === undefined).length ?? 0;
  return (
    <Layout context={context} title={t('member.import')}>
      <Notice
        context={context}
        error={error}
        done={
          results === undefined ? undefined : t('import.summary', { added, failed: results.length - added })
        }
      />
      {results !== undefined && results.length > 0 && (
        <DataTable
          context={context}
          className="import-results"
          rows={results}
          row={(r) => ({ class: r.error === undefined ? 'row-ok' : 'row-failed' })}
          columns={[
            { kind: 'number', header: t('import.line'), value: (r) => r.line },
            { kind: 'code', header: t('member.userName'), value: (r) => r.userName, max: 32 },
            {
              kind: 'text',
              header: t('import.result'),
              render: (r) =>
                r.error === undefined ? (
                  t('import.added')
                ) : (
                  <span class="field-error">
                    {r.error.code !== undefined && <span class="code">{r.error.code}</span>}{' '}
                    {r.error.field !== undefined &&
                      `${t(FIELD_LABELS[r.error.field as MemberField] ?? 'import.file')}: `}
                    {r.error.message}
                  </span>
                ),
            },
          ]}
        />
      )}
      <p>{t('import.hint')}</p>
      <pre class="sample">
        {'userName,password,name,departmentId,mobile,remark\nalice,Secret-pass1,Alice Wang,0,13800138000,\n'}
      </pre>
      <form method="post" action="/console/enterprise/members/import" enctype="multipart/form-data">
        <Csrf context={context} />
        <p class="field">
          <label for="field-file">{t('import.file')}</label>
          <input
            id="field-file"
            name="file"
            type="file"
            accept=".csv,text/csv"
            required
            aria-invalid={error?.field === 'file' ? 'true' : undefined}
          />
          {error?.field === 'file' && (
            <small class="field-error">
              {error.code !== undefined && `${error.code}: `}
              {error.message}
            </small>
          )}
        </p>
        <button type="submit">{t('import.submit')}</button>{' '}
        <a href="/console/enterprise">{t('common.cancel')}</a>
      </form>
    </Layout>
  );
}

type Parsed = { rows: Array<{ line: number; user: Record<string, string> }> } | { error: ConsoleError };

/** The upload as op 1's users, or what is wrong with the file as a whole. */
function readUpload(context: ConsoleContext, upload: unknown): Parsed {
  const { t } = context;
  if (!Buffer.isBuffer(upload) || upload.length === 0) {
    return { error: { code: MemberCode.userListEmpty, message: t('code.40021'), field: 'file' } };
  }
  const [header, ...body] = parseCsv(upload.toString('utf8'));
  if (header === undefined) {
    return { error: { code: MemberCode.userListEmpty, message: t('code.40021'), field: 'file' } };
  }
  const names = header.fields.map((h) => COLUMNS[h.trim().toLowerCase()]);
  const unknown = header.fields.filter((_, i) => names[i] === undefined);
  if (unknown.length > 0 || !names.includes('userName')) {
    return { error: { message: t('import.badHeader', { columns: unknown.join(', ') }), field: 'file' } };
  }
  const rows = body.map((row) => {
    const user: Record<string, string> = {};
    names.forEach((name, i) => {
      if (name !== undefined) user[name] = (row.fields[i] ?? '').trim();
    });
    // A password is taken as written: spaces may be part of it.
    const at = names.indexOf('password');
    if (at >= 0) user.password = row.fields[at] ?? '';
    return { line: row.line, user };
  });
  return { rows };
}

/** The outcome of each row of one batch: added, or the reason the service gave for it. */
function outcomes(
  context: ConsoleContext,
  chunk: Array<{ line: number; user: Record<string, string> }>,
  result: AddMembersResult,
): RowResult[] {
  const added = new Set(result.succeeded.map((m) => m.userName.toLowerCase().split('@')[0]));
  const failed = [...result.failed];
  return chunk.map(({ line, user }) => {
    const userName = user.userName ?? '';
    // An account is added at most once, for its first row; later rows with it are repeats.
    if (added.delete(userName.toLowerCase())) return { line, userName };
    // Failures come back in row order, named by what the row sent: the first unused one is this row's.
    const at = failed.findIndex((f) => f.userName === userName);
    if (at >= 0) {
      const [failure] = failed.splice(at, 1);
      return { line, userName, error: rowFailure(context.t, failure?.message ?? '') };
    }
    return { line, userName, error: { message: context.t('import.unknownOutcome') } };
  });
}

async function addChunk(
  app: App,
  request: FastifyRequest,
  chunk: Array<{ line: number; user: Record<string, string> }>,
): Promise<RowResult[]> {
  const context = enterpriseContext(request);
  const users = chunk.map((r) => r.user);
  try {
    const result = await app.services.members.add(
      context.session.member.enterpriseId,
      users,
      actorOf(request),
    );
    return outcomes(context, chunk, result);
  } catch (error) {
    if (error instanceof KeywardError && error.code === MemberCode.partialFailure) {
      return outcomes(context, chunk, error.options.data as AddMembersResult);
    }
    const shown = consoleErrorOf(context.t, error);
    if (shown === undefined) throw error;
    return chunk.map(({ line, user }) => ({ line, userName: user.userName ?? '', error: shown }));
  }
}

/**
 * GET and POST /console/enterprise/members/import: employees from a CSV file, through member op 1
 * in batches of its limit. Good rows are added, bad ones reported by line with code and reason.
 */
export function importMembersRoutes(app: App): void {
  app.get(
    '/enterprise/members/import',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => sendPage(reply, <ImportPage context={enterpriseContext(request)} />),
  );
  // The file and the form's few fields around it.
  app.post(
    '/enterprise/members/import',
    { config: { access: ACCESS.enterpriseSession }, bodyLimit: UPLOAD_LIMIT_BYTES + FORM_LIMIT_BYTES },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const parsed = readUpload(context, (request.body as Record<string, unknown> | undefined)?.file);
      if ('error' in parsed)
        return sendPage(reply, <ImportPage context={context} error={parsed.error} />, 422);
      if (parsed.rows.length === 0) {
        const error = { code: MemberCode.userListEmpty, message: context.t('code.40021'), field: 'file' };
        return sendPage(reply, <ImportPage context={context} error={error} />, 422);
      }
      const results: RowResult[] = [];
      for (let start = 0; start < parsed.rows.length; start += MAX_USERS_PER_CALL) {
        results.push(...(await addChunk(app, request, parsed.rows.slice(start, start + MAX_USERS_PER_CALL))));
      }
      return sendPage(reply, <ImportPage context={context} results={results} />);
    },
  );
}
