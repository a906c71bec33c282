import type { FastifyReply, FastifyRequest } from 'fastify';
import type {
  AdminDeliveryRow,
  AdminEndpointRow,
} from '../../../domain/webhooks/webhook-admin.repository.js';
import {
  MAX_REPLAY_EVENTS,
  WebhookAdminNotFoundError,
} from '../../../domain/webhooks/webhook-admin.service.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Csrf, Field, Notice, Time, type ConsoleError } from '../ui.js';
import { Can } from '../can.js';
import { Deliveries, DELIVERIES_PAGE_SIZE } from './webhook-deliveries.js';
import { EndpointStatus, EventFilter, Failures, LastAttempt } from './webhook-parts.js';
import {
  endpointHref,
  isEndpointId,
  parseDeliveriesQuery,
  WEBHOOKS,
  type DeliveriesQuery,
  type ReplayForm,
} from './webhooks-filter.js';
import { operatorMay } from '../../access/access.js';

/** What the page shows beside the endpoint: the last action's outcome, the replay form's values. */
export interface EndpointPageState {
  error?: ConsoleError;
  done?: string;
  replay?: ReplayForm;
  /** The answer's status: 400 for a refused action. */
  status?: number;
}

function Facts(props: { context: ConsoleContext; endpoint: AdminEndpointRow }) {
  const { context, endpoint } = props;
  const { t } = context;
  return (
    <dl class="facts">
      <dt>{t('webhooks.id')}</dt>
      <dd>
        <code>{endpoint.id}</code>
      </dd>
      <dt>{t('webhooks.app')}</dt>
      <dd>
        <a href={`${WEBHOOKS}?${new URLSearchParams({ app: endpoint.appKey })}`}>
          <code>{endpoint.appKey}</code>
        </a>
      </dd>
      <dt>{t('webhooks.url')}</dt>
      <dd class="endpoint-url">{endpoint.url}</dd>
      <dt>{t('webhooks.events')}</dt>
      <dd>
        <EventFilter context={context} types={endpoint.eventTypes} />
      </dd>
      <dt>{t('common.status')}</dt>
      <dd>
        <EndpointStatus context={context} endpoint={endpoint} />
      </dd>
      <dt>{t('webhooks.failures')}</dt>
      <dd>
        <Failures context={context} endpoint={endpoint} />
      </dd>
      <dt>{t('webhooks.lastAttempt')}</dt>
      <dd>
        <LastAttempt context={context} endpoint={endpoint} />
      </dd>
      <dt>{t('common.created')}</dt>
      <dd>
        <Time at={endpoint.createdAt} />
      </dd>
    </dl>
  );
}

function ReplayFormView(props: {
  context: ConsoleContext;
  endpoint: AdminEndpointRow;
  form: ReplayForm;
  error?: ConsoleError | undefined;
}) {
  const { context, endpoint, form, error } = props;
  const { t } = context;
  return (
    <form
      method="post"
      action={`${endpointHref(endpoint.id)}/replay`}
      class="replay"
      data-confirm={t('webhooks.replayConfirm', { id: endpoint.id })}
    >
      <h2>{t('webhooks.replay')}</h2>
      <p class="hint">{t('webhooks.replayHint', { max: MAX_REPLAY_EVENTS.toLocaleString('en') })}</p>
      <Csrf context={context} />
      <div class="filters">
        <Field
          name="from"
          label={t('webhooks.from')}
          type="datetime-local"
          step={1}
          required
          value={form.from}
          error={error}
        />
        <Field
          name="to"
          label={t('webhooks.to')}
          type="datetime-local"
          step={1}
          required
          value={form.to}
          error={error}
        />
        <p>
          <button type="submit">{t('webhooks.replaySubmit')}</button>
        </p>
      </div>
    </form>
  );
}

/**
 * The endpoint's page: its facts, the replay form, and a page of its deliveries. Answers the
 * console's not-found page for an id that names no endpoint, well-formed or not.
 */
export async function showEndpoint(
  app: App,
  request: FastifyRequest,
  reply: FastifyReply,
  endpointId: string,
  query: DeliveriesQuery,
  state: EndpointPageState = {},
) {
  const context = operatorContext(request);
  const { t } = context;
  if (!isEndpointId(endpointId)) return sendErrorPage(request, reply, 404, 'error.notFound');
  const { status, statusText, before } = parseDeliveriesQuery(query);
  let endpoint: AdminEndpointRow;
  let rows: AdminDeliveryRow[] = [];
  try {
    endpoint = await app.services.webhookAdmin.endpoint(endpointId);
    if (status !== 'bad') {
      // One more than a page: whether there is an older page, without counting them.
      rows = await app.services.webhookAdmin.listDeliveries({
        endpointId,
        ...(status === '' ? {} : { status }),
        ...(before === undefined ? {} : { before }),
        limit: DELIVERIES_PAGE_SIZE + 1,
      });
    }
  } catch (error) {
    if (error instanceof WebhookAdminNotFoundError)
      return sendErrorPage(request, reply, 404, 'error.notFound');
    throw error;
  }
  const error = state.error;
  return sendPage(
    reply,
    <Layout context={context} title={t('webhooks.endpointTitle', { id: endpoint.id })}>
      <p class="actions">
        <a href={WEBHOOKS}>{t('webhooks.back')}</a>
        <a href={`/console/operator/audit?${new URLSearchParams({ subject: endpoint.id })}`}>
          {t('webhooks.auditLink')}
        </a>
      </p>
      <Notice context={context} error={error?.field === undefined ? error : undefined} done={state.done} />
      {endpoint.status === 'disabled' && (
        <p class="notice disabled-hint">{t('webhooks.disabledHint', { id: endpoint.id })}</p>
      )}
      <Facts context={context} endpoint={endpoint} />
      <Can context={context} permission="write">
        <ReplayFormView
          context={context}
          endpoint={endpoint}
          form={state.replay ?? { from: '', to: '' }}
          error={error}
        />
      </Can>
      <Deliveries
        context={context}
        endpointId={endpoint.id}
        rows={rows}
        status={status}
        statusText={statusText}
        before={before}
      />
    </Layout>,
    state.status ?? (status === 'bad' ? 400 : 200),
  );
}

type EndpointParams = { Params: { endpointId: string }; Querystring: DeliveriesQuery };

/** GET /console/operator/webhooks/:endpointId: `GET /admin/webhooks/deliveries?endpoint=…`. */
export function webhookEndpointRoute(app: App): void {
  app.get<EndpointParams>(
    '/operator/webhooks/:endpointId',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const { t } = operatorContext(request);
      const { done, delivery, queued } = request.query;
      // Only what an action just did, from its redirect: ids and counts as digits, nothing else.
      const doneText =
        done === 'retried' && /^[1-9][0-9]{0,14}$/.test(delivery ?? '')
          ? t('webhooks.retried', { id: String(delivery) })
          : done === 'replayed' && /^[0-9]{1,6}$/.test(queued ?? '')
            ? queued === '1'
              ? t('webhooks.replayedOne')
              : t('webhooks.replayed', { queued: Number(queued).toLocaleString('en') })
            : undefined;
      return showEndpoint(app, request, reply, request.params.endpointId, request.query, {
        ...(doneText === undefined ? {} : { done: doneText }),
      });
    },
  );
}
