import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AppInputError,
  AppNotFoundError,
  AppProtectedError,
  SCOPES,
  type AppView,
  type AppWithSecret,
} from '../../../domain/apps/apps.service.js';
import { OFFLINE_LEASE_MAX_DAYS } from '../../../domain/apps/offline-lease.js';
import type { App } from '../../app-type.js';
import { Can, may } from '../can.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import {
  ActionButton,
  Badge,
  Csrf,
  Empty,
  Field,
  InlineList,
  Notice,
  Pager,
  CompactTime,
  DataTable,
  toneOf,
  type Column,
  type ConsoleError,
} from '../ui.js';
import { consoleRequest } from './form.js';
import { formChecked, formText, pageOf } from '../form-fields.js';
import { operatorMay } from '../../access/access.js';

const APPS = '/console/operator/apps';

/** What the create form held, to show it again beside an error. */
interface CreateForm {
  name: string;
  scopes: string[];
  channels: string;
  pending: boolean;
}

const EMPTY_FORM: CreateForm = { name: '', scopes: [], channels: '', pending: true };

const APPS_PAGE_SIZE = 50;

/**
 * One page of the channel apps, newest first (a just-created app is on the first), and the
 * console's own client, shown apart.
 */
interface AppsListing {
  apps: AppView[];
  total: number;
  page: number;
  search: string;
  consoleClient: AppView | undefined;
}

async function listApps(app: App, query: { q?: string; page?: string } = {}): Promise<AppsListing> {
  const search = (query.q ?? '').trim().slice(0, 100);
  const page = pageOf(query.page);
  const [{ total, apps }, consoleClient] = await Promise.all([
    app.services.apps.page({ search, page, pageSize: APPS_PAGE_SIZE }),
    app.services.apps.consoleClient(),
  ]);
  return { apps, total, page, search, consoleClient };
}

interface AppsPageProps {
  context: ConsoleContext;
  listing: AppsListing;
  form?: CreateForm;
  error?: ConsoleError;
  done?: string;
  /** A secret just made: on this one page, never in a URL or cookie, never again. */
  secret?: AppWithSecret;
}

/** Which field an AppInputError is about, from the service's sentence. */
function fieldOf(message: string): string | undefined {
  if (message.startsWith('name')) return 'name';
  if (message.includes('scope')) return 'scopes';
  if (message.startsWith('channel')) return 'channels';
  return undefined;
}

function consoleErrorOf(error: AppInputError): ConsoleError {
  const field = fieldOf(error.message);
  return { code: 'AppInputError', message: error.message, ...(field === undefined ? {} : { field }) };
}

/** An app key is shown whole: `kw_` and 16 characters. */
const APP_KEY_CHARS = 20;
/** Characters of a channel code on screen; the whole one on hover. */
const CHANNEL_CHARS = 20;

/** What an operator can do to an app: approve, rotate its secret, disable it. */
function AppActions(props: { context: ConsoleContext; app: AppView }) {
  const { context, app } = props;
  const { t } = context;
  const base = `${APPS}/${encodeURIComponent(app.appKey)}`;
  return (
    <Can context={context} permission="write">
      {app.status === 'pending' && (
        <ActionButton context={context} action={`${base}/approve`} label={t('apps.approve')} />
      )}
      {app.status !== 'disabled' && (
        <>
          <form
            method="post"
            action={`${base}/rotate`}
            class="inline"
            data-confirm={t('apps.rotateConfirm', { appKey: app.appKey })}
          >
            <Csrf context={context} />
            <label class="inline-check">
              <input type="checkbox" name="revokeTokens" value="1" /> {t('apps.revokeTokens')}
            </label>
            <button type="submit" class="secondary">
              {t('apps.rotate')}
            </button>
          </form>
          <ActionButton
            context={context}
            action={`${base}/disable`}
            label={t('apps.disable')}
            confirm={t('apps.disableConfirm', { appKey: app.appKey })}
            danger
          />
        </>
      )}
    </Can>
  );
}

/** The days an app's offline leases may last: a field to change them, for who may write. */
function OfflineDays(props: { context: ConsoleContext; app: AppView }) {
  const { context, app } = props;
  const { t } = context;
  if (app.status === 'disabled' || !may(context, 'write')) return <>{app.offlineLeaseMaxDays}</>;
  return (
    <form
      method="post"
      action={`${APPS}/${encodeURIComponent(app.appKey)}/offline-lease-days`}
      class="inline"
    >
      <Csrf context={context} />
      <input
        type="number"
        name="days"
        min={0}
        max={OFFLINE_LEASE_MAX_DAYS}
        step={1}
        required
        value={String(app.offlineLeaseMaxDays)}
        aria-label={t('apps.offlineDaysFor', { appKey: app.appKey })}
        title={t('apps.offlineDaysHint')}
      />
      <button type="submit" class="secondary">
        {t('common.save')}
      </button>
    </form>
  );
}

const statusColumn = (t: ConsoleContext['t']): Column<AppView> => ({
  kind: 'text',
  header: t('common.status'),
  className: 'status',
  cell: (app) => ({ class: `status status-${app.status}` }),
  render: (app) => <Badge tone={toneOf(app.status)}>{t(`apps.status.${app.status}` as MessageKey)}</Badge>,
});

/** The channel apps: the key with its creation time under it (one column less: 1280 pixels). */
function AppsTable(props: { context: ConsoleContext; apps: AppView[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="apps"
      rows={props.apps}
      row={(app) => ({ 'data-app': app.appKey })}
      columns={[
        {
          kind: 'id',
          header: `${t('apps.key')} · ${t('common.inUtc', { header: t('common.created') })}`,
          className: 'app-key',
          value: (app) => app.appKey,
          max: APP_KEY_CHARS,
          sub: (app) => <CompactTime at={app.createdAt} />,
        },
        { kind: 'text', header: t('apps.name'), className: 'app-name', render: (app) => app.name },
        { kind: 'text', header: t('apps.scopes'), render: (app) => <InlineList items={app.scopes} /> },
        {
          kind: 'text',
          header: t('apps.channels'),
          render: (app) => <InlineList items={app.channels} max={CHANNEL_CHARS} />,
        },
        statusColumn(t),
        {
          kind: 'text',
          header: t('apps.offlineDays'),
          headerTitle: t('apps.offlineDaysHint'),
          cell: (app) => ({ 'data-offline-days': app.offlineLeaseMaxDays }),
          render: (app) => <OfflineDays context={context} app={app} />,
        },
        {
          kind: 'text',
          header: t('common.actions'),
          className: 'actions',
          render: (app) => <AppActions context={context} app={app} />,
        },
      ]}
    />
  );
}

/**
 * The console's own sign-in client, apart from the channel apps and with no control: disabling or
 * rotating it would end console sign-in for every enterprise (the CLI does it only with --force).
 */
function ConsoleClientSection(props: { context: ConsoleContext; client: AppView }) {
  const { context, client } = props;
  const { t } = context;
  return (
    <section class="console-client" data-console-client={client.appKey}>
      <h2>{t('apps.consoleClient')}</h2>
      <p class="hint">{t('apps.consoleClientHint', { appKey: client.appKey })}</p>
      <DataTable
        context={context}
        className="apps"
        rows={[client]}
        row={(app) => ({ 'data-app': app.appKey })}
        columns={[
          { kind: 'id', header: t('apps.key'), value: (app) => app.appKey, max: APP_KEY_CHARS },
          { kind: 'text', header: t('apps.name'), className: 'app-name', render: (app) => app.name },
          { kind: 'text', header: t('apps.scopes'), render: (app) => <InlineList items={app.scopes} /> },
          statusColumn(t),
          { kind: 'time', header: t('common.created'), value: (app) => app.createdAt },
        ]}
      />
    </section>
  );
}

function CreateAppForm(props: { context: ConsoleContext; form: CreateForm; error?: ConsoleError }) {
  const { context, form, error } = props;
  const { t } = context;
  const scopesInvalid = error?.field === 'scopes';
  return (
    <form method="post" action={APPS} class="create-app">
      <h2>{t('apps.create')}</h2>
      <Csrf context={context} />
      <Field name="name" label={t('apps.name')} value={form.name} required maxLength={100} error={error} />
      <fieldset aria-invalid={scopesInvalid ? 'true' : undefined}>
        <legend>{t('apps.scopes')}</legend>
        {SCOPES.map((scope) => (
          <label class="inline-check">
            <input type="checkbox" name={`scope_${scope}`} value="1" checked={form.scopes.includes(scope)} />{' '}
            {scope}
          </label>
        ))}
        {scopesInvalid && (
          <small class="field-error">
            {error.code !== undefined && `${error.code}: `}
            {error.message}
          </small>
        )}
      </fieldset>
      <Field
        name="channels"
        label={`${t('apps.channels')} — ${t('apps.channelsHint')}`}
        value={form.channels}
        maxLength={4000}
        error={error}
      />
      <fieldset>
        <legend>{t('apps.createAs')}</legend>
        <label class="inline-check">
          <input type="radio" name="status" value="pending" checked={form.pending} />{' '}
          {t('apps.createPending')}
        </label>
        <label class="inline-check">
          <input type="radio" name="status" value="active" checked={!form.pending} /> {t('apps.createActive')}
        </label>
      </fieldset>
      <button type="submit">{t('apps.submitCreate')}</button>
    </form>
  );
}

function AppsPage(props: AppsPageProps) {
  const { context, listing, secret, error } = props;
  const { apps } = listing;
  const { t } = context;
  const href = (page: number) => `${APPS}?${new URLSearchParams({ q: listing.search, page: String(page) })}`;
  return (
    <Layout context={context} title={t('nav.apps')}>
      <Notice context={context} error={error?.field === undefined ? error : undefined} done={props.done} />
      {secret !== undefined && (
        <section class="notice done one-time-secret" data-replace-location={APPS}>
          <p>{t('apps.secretOnce')}</p>
          <p>
            <code>{secret.appKey}</code> — {t('apps.secret')}:
          </p>
          <p class="secret" data-secret>
            {secret.appSecret}
          </p>
        </section>
      )}
      <form method="get" action={APPS} class="filters">
        <input type="search" name="q" value={listing.search} aria-label={t('common.search')} />
        <button type="submit">{t('common.search')}</button>
      </form>
      {apps.length === 0 ? <Empty>{t('apps.empty')}</Empty> : <AppsTable context={context} apps={apps} />}
      <Pager
        context={context}
        page={listing.page}
        pageSize={APPS_PAGE_SIZE}
        total={listing.total}
        href={href}
      />
      {listing.consoleClient !== undefined && (
        <ConsoleClientSection context={context} client={listing.consoleClient} />
      )}
      <Can context={context} permission="write">
        <CreateAppForm context={context} form={props.form ?? EMPTY_FORM} error={error} />
      </Can>
    </Layout>
  );
}

const DONE: Record<string, MessageKey> = {
  approved: 'apps.approved',
  disabled: 'apps.disabled',
  offlineDays: 'apps.offlineDaysSet',
};

type KeyParams = { Params: { appKey: string } };

/**
 * Answers a failed action on the page, or 404 for an app that does not exist. A change to the
 * console's own client (a post made by hand: its section has no controls) is refused with 409.
 */
async function refuse(app: App, request: FastifyRequest<KeyParams>, reply: FastifyReply, error: unknown) {
  if (error instanceof AppNotFoundError) return sendErrorPage(request, reply, 404, 'error.notFound');
  if (error instanceof AppProtectedError) {
    const context = operatorContext(request);
    const message = context.t('apps.consoleClientProtected', { appKey: request.params.appKey });
    return sendPage(
      reply,
      <AppsPage context={context} listing={await listApps(app)} error={{ message }} />,
      409,
    );
  }
  if (!(error instanceof AppInputError)) throw error;
  const context = operatorContext(request);
  return sendPage(
    reply,
    <AppsPage context={context} listing={await listApps(app)} error={consoleErrorOf(error)} />,
    400,
  );
}

/** GET and POST /console/operator/apps and its actions: the same service as `keyward app …`. */
export function appsRoutes(app: App): void {
  app.get<{ Querystring: { done?: string; app?: string; q?: string; page?: string } }>(
    '/operator/apps',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const key = DONE[request.query.done ?? ''];
      const done =
        key === undefined ? undefined : context.t(key, { appKey: String(request.query.app ?? '') });
      const listing = await listApps(app, request.query);
      return sendPage(reply, <AppsPage context={context} listing={listing} done={done} />);
    },
  );

  app.post('/operator/apps', { config: { access: operatorMay('write') } }, async (request, reply) => {
    const context = operatorContext(request);
    const form: CreateForm = {
      name: formText(request, 'name'),
      scopes: SCOPES.filter((scope) => formChecked(request, `scope_${scope}`)),
      channels: formText(request, 'channels'),
      pending: formText(request, 'status') !== 'active',
    };
    const reshow = async (error: ConsoleError) =>
      sendPage(
        reply,
        <AppsPage context={context} listing={await listApps(app)} form={form} error={error} />,
        400,
      );
    if (form.scopes.length === 0)
      return reshow({ message: context.t('apps.scopesRequired'), field: 'scopes' });
    try {
      const created = await app.services.apps.create(
        {
          name: form.name,
          scopes: form.scopes,
          channels: form.channels.split(/[\s,]+/).filter((c) => c !== ''),
          pending: form.pending,
        },
        consoleRequest(request),
      );
      const done = context.t('apps.created', { appKey: created.appKey });
      return sendPage(
        reply,
        <AppsPage context={context} listing={await listApps(app)} secret={created} done={done} />,
      );
    } catch (error) {
      if (error instanceof AppInputError) return reshow(consoleErrorOf(error));
      throw error;
    }
  });

  app.post<KeyParams>(
    '/operator/apps/:appKey/approve',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const { appKey } = request.params;
      try {
        await app.services.apps.approve(appKey, consoleRequest(request));
      } catch (error) {
        return refuse(app, request, reply, error);
      }
      return redirectTo(reply, `${APPS}?${new URLSearchParams({ done: 'approved', app: appKey })}`);
    },
  );

  app.post<KeyParams>(
    '/operator/apps/:appKey/disable',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const { appKey } = request.params;
      try {
        await app.services.apps.disable(appKey, consoleRequest(request));
      } catch (error) {
        return refuse(app, request, reply, error);
      }
      return redirectTo(reply, `${APPS}?${new URLSearchParams({ done: 'disabled', app: appKey })}`);
    },
  );

  app.post<KeyParams>(
    '/operator/apps/:appKey/offline-lease-days',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const { appKey } = request.params;
      const text = formText(request, 'days').trim();
      // Anything but digits (a blank field too) is for the service to refuse, with its message.
      const days = /^[0-9]{1,6}$/.test(text) ? Number(text) : Number.NaN;
      try {
        await app.services.apps.setOfflineLeaseMaxDays(appKey, days, consoleRequest(request));
      } catch (error) {
        return refuse(app, request, reply, error);
      }
      return redirectTo(reply, `${APPS}?${new URLSearchParams({ done: 'offlineDays', app: appKey })}`);
    },
  );

  // The new secret is on this answer only, like the API's: reloading posts nothing and shows none.
  app.post<KeyParams>(
    '/operator/apps/:appKey/rotate',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const revokeTokens = formChecked(request, 'revokeTokens');
      try {
        const rotated = await app.services.apps.rotateSecret(
          request.params.appKey,
          { revokeTokens },
          consoleRequest(request),
        );
        const done = context.t(rotated.tokensRevoked ? 'apps.rotatedRevoked' : 'apps.rotated', {
          appKey: rotated.appKey,
        });
        return sendPage(
          reply,
          <AppsPage context={context} listing={await listApps(app)} secret={rotated} done={done} />,
        );
      } catch (error) {
        return refuse(app, request, reply, error);
      }
    },
  );
}
