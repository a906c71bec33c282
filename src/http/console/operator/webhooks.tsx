import type { AdminEndpointRow } from '../../../domain/webhooks/webhook-admin.repository.js';
import { WebhookAdminNotFoundError } from '../../../domain/webhooks/webhook-admin.service.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Field, type ConsoleError } from '../ui.js';
import { EndpointStatus, EventFilter, Failures, LastAttempt } from './webhook-parts.js';
import { APP_KEY_MAX, endpointHref, parseEndpointsQuery, WEBHOOKS } from './webhooks-filter.js';
import { operatorMay } from '../../access/access.js';

/** `GET /admin/webhooks/endpoints` has no offset: the page shows the first endpoints and says so. */
const MAX_ROWS = 100;

function EndpointRow(props: { context: ConsoleContext; endpoint: AdminEndpointRow }) {
  const { context, endpoint } = props;
  const { t } = context;
  const href = endpointHref(endpoint.id);
  return (
    <tr data-endpoint={endpoint.id}>
      <td>
        <a href={`/console/operator/apps?${new URLSearchParams({ q: endpoint.appKey })}`}>
          <code>{endpoint.appKey}</code>
        </a>
      </td>
      <td class="endpoint-url">
        <a href={href}>{endpoint.url}</a>
        <br />
        <small>
          <code>{endpoint.id}</code>
        </small>
      </td>
      <td>
        <EventFilter context={context} types={endpoint.eventTypes} />
      </td>
      <td>
        <EndpointStatus context={context} endpoint={endpoint} />
      </td>
      <td>
        <Failures context={context} endpoint={endpoint} />
      </td>
      <td>
        <LastAttempt context={context} endpoint={endpoint} />
      </td>
      <td class="actions">
        <a href={href}>{t('webhooks.deliveries')}</a>
      </td>
    </tr>
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
            <div class="table-wrap">
              <table class="webhooks">
                <thead>
                  <tr>
                    <th>{t('webhooks.app')}</th>
                    <th>{t('webhooks.endpoint')}</th>
                    <th>{t('webhooks.events')}</th>
                    <th>{t('common.status')}</th>
                    <th>{t('webhooks.failures')}</th>
                    <th>{t('webhooks.lastAttempt')}</th>
                    <th>{t('common.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  {endpoints.map((endpoint) => (
                    <EndpointRow context={context} endpoint={endpoint} />
                  ))}
                </tbody>
              </table>
            </div>
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
