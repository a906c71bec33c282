import type { AdminEndpointRow } from '../../../domain/webhooks/webhook-admin.repository.js';
import { WebhookAdminNotFoundError } from '../../../domain/webhooks/webhook-admin.service.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { DataTable, Empty, Field, Ident, type ConsoleError } from '../ui.js';
import { operatorLinks } from './links.js';
import { EndpointStatus, EventFilter, Failures, LastAttempt } from './webhook-parts.js';
import { APP_KEY_MAX, endpointHref, parseEndpointsQuery, WEBHOOKS } from './webhooks-filter.js';
import { operatorMay } from '../../access/access.js';

/** `GET /admin/webhooks/endpoints` has no offset: the page shows the first endpoints and says so. */
const MAX_ROWS = 100;

/** An app key is shown whole: `kw_` and 16 characters. */
const APP_KEY_CHARS = 20;
/** Characters of an endpoint's id on screen; the whole one on hover. */
const ENDPOINT_ID_CHARS = 16;

function EndpointsTable(props: { context: ConsoleContext; endpoints: AdminEndpointRow[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="webhooks"
      rows={props.endpoints}
      row={(e) => ({ 'data-endpoint': e.id })}
      columns={[
        {
          kind: 'id',
          header: t('webhooks.app'),
          value: (e) => e.appKey,
          href: (e) => operatorLinks.app(e.appKey),
          max: APP_KEY_CHARS,
        },
        {
          kind: 'text',
          header: t('webhooks.endpoint'),
          className: 'endpoint-url',
          render: (e) => <a href={endpointHref(e.id)}>{e.url}</a>,
          sub: (e) => <Ident context={context} value={e.id} max={ENDPOINT_ID_CHARS} />,
        },
        {
          kind: 'text',
          header: t('webhooks.events'),
          render: (e) => <EventFilter context={context} types={e.eventTypes} />,
        },
        {
          kind: 'text',
          header: t('common.status'),
          render: (e) => <EndpointStatus context={context} endpoint={e} />,
        },
        {
          kind: 'text',
          header: t('webhooks.failures'),
          render: (e) => <Failures context={context} endpoint={e} />,
        },
        {
          kind: 'text',
          header: t('common.inUtc', { header: t('webhooks.lastAttempt') }),
          render: (e) => <LastAttempt context={context} endpoint={e} compact />,
        },
        {
          kind: 'text',
          header: t('common.actions'),
          className: 'actions',
          render: (e) => <a href={endpointHref(e.id)}>{t('webhooks.deliveries')}</a>,
        },
      ]}
    />
  );
}

/** GET /console/operator/webhooks: `GET /admin/webhooks/endpoints`, every app's or one app's. */
export function webhooksRoute(app: App): void {
  app.get<{ Querystring: { app?: string } }>(
    '/operator/webhooks',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const { app: appKey, tooLong } = parseEndpointsQuery(request.query);
      let error: ConsoleError | undefined;
      let rows: AdminEndpointRow[] = [];
      if (tooLong) {
        error = { message: t('webhooks.appTooLong', { max: APP_KEY_MAX }), field: 'app' };
      } else {
        try {
          // One row more than shown: whether some were left out, without counting them.
          rows = await app.services.webhookAdmin.listEndpoints({
            ...(appKey === '' ? {} : { appKey }),
            limit: MAX_ROWS + 1,
          });
        } catch (caught) {
          if (!(caught instanceof WebhookAdminNotFoundError)) throw caught;
          error = { message: t('webhooks.noApp', { appKey }), field: 'app' };
        }
      }
      const endpoints = rows.slice(0, MAX_ROWS);
      const status = error === undefined ? 200 : tooLong ? 400 : 404;
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.webhooks')}>
          <p class="hint">{t('webhooks.noSecret')}</p>
          <form method="get" action={WEBHOOKS} class="filters">
            <Field
              name="app"
              label={t('webhooks.app')}
              value={appKey}
              maxLength={APP_KEY_MAX}
              error={error}
            />
            <p>
              <button type="submit">{t('webhooks.filter')}</button>
            </p>
          </form>
          {error !== undefined ? null : endpoints.length === 0 ? (
            <Empty>{appKey === '' ? t('webhooks.empty') : t('webhooks.emptyApp', { appKey })}</Empty>
          ) : (
            <EndpointsTable context={context} endpoints={endpoints} />
          )}
          {rows.length > MAX_ROWS && (
            <p class="hint" role="status">
              {t('webhooks.first', { count: MAX_ROWS })}
            </p>
          )}
        </Layout>,
        status,
      );
    },
  );
}
