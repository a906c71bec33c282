import { may } from '../can.js';
import {
  DELIVERY_STATUSES,
  type AdminDeliveryRow,
  type DeliveryStatus,
} from '../../../domain/webhooks/webhook-admin.repository.js';
import type { ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { ActionButton, Badge, Empty, Time, toneOf, type ConsoleError } from '../ui.js';
import { StoredError } from './webhook-errors.js';
import { errorBeyondStatus, Outcome } from './webhook-parts.js';
import { endpointHref, WEBHOOKS } from './webhooks-filter.js';

/** Deliveries a page shows, newest first; older ones are a link away. */
export const DELIVERIES_PAGE_SIZE = 50;

const deliveryStatusKey = (status: DeliveryStatus): MessageKey => `webhooks.delivery.${status}`;

function DeliveryRow(props: { context: ConsoleContext; endpointId: string; delivery: AdminDeliveryRow }) {
  const { context, endpointId, delivery } = props;
  const { t } = context;
  const error = errorBeyondStatus(delivery.lastError, delivery.lastStatusCode);
  return (
    <tr data-delivery={delivery.id} data-status={delivery.status}>
      <td>{delivery.id}</td>
      <td>
        <code>{delivery.eventType}</code>
        <br />
        <small>
          <code class="event-id">{delivery.eventId}</code>
        </small>
      </td>
      <td class={`status status-${delivery.status}`}>
        <Badge tone={toneOf(delivery.status)}>{t(deliveryStatusKey(delivery.status))}</Badge>
      </td>
      <td>{delivery.attempts}</td>
      <td>
        {delivery.lastAttemptAt === null ? (
          <span class="hint">{t('webhooks.never')}</span>
        ) : (
          <>
            <Time at={delivery.lastAttemptAt} />
            {delivery.attempts > 0 && (
              <>
                <br />
                <Outcome
                  context={context}
                  statusCode={delivery.lastStatusCode}
                  error={delivery.lastStatusCode === null ? delivery.lastError : null}
                  latencyMs={delivery.lastLatencyMs}
                />
              </>
            )}
          </>
        )}
      </td>
      <td class="error">
        {error === null ? (
          '—'
        ) : (
          <small>
            <StoredError context={context} error={error} />
          </small>
        )}
      </td>
      <td>{delivery.status === 'pending' ? <Time at={delivery.nextAttemptAt} /> : '—'}</td>
      <td class="actions">
        {delivery.status === 'delivered' ? (
          <small class="hint">{t('webhooks.deliveredHint')}</small>
        ) : !may(context, 'retry') ? (
          '—'
        ) : (
          <ActionButton
            context={context}
            action={`${WEBHOOKS}/deliveries/${delivery.id}/retry`}
            label={t('webhooks.retry')}
            fields={{ endpoint: endpointId }}
          />
        )}
      </td>
    </tr>
  );
}

/**
 * An endpoint's deliveries: the status filter, a page of them (`rows` holds one more than a page
 * when there are older ones) and the links to the newest and the older ones.
 */
export function Deliveries(props: {
  context: ConsoleContext;
  endpointId: string;
  rows: AdminDeliveryRow[];
  status: DeliveryStatus | '' | 'bad';
  statusText: string;
  before: number | undefined;
}) {
  const { context, endpointId, rows, status, statusText, before } = props;
  const { t } = context;
  const statusError: ConsoleError | undefined =
    status === 'bad' ? { message: t('webhooks.badStatus'), field: 'status' } : undefined;
  const deliveries = rows.slice(0, DELIVERIES_PAGE_SIZE);
  const last = deliveries.at(-1);
  const href = endpointHref(endpointId);
  const pageHref = (extra: Record<string, string>) =>
    `${href}?${new URLSearchParams({ ...(status === '' || status === 'bad' ? {} : { status }), ...extra })}`;
  return (
    <>
      <h2 class="webhook-section">{t('webhooks.deliveries')}</h2>
      <form method="get" action={href} class="filters">
        <p class="field">
          <label for="field-status">{t('webhooks.deliveryStatus')}</label>
          <select
            id="field-status"
            name="status"
            aria-invalid={statusError === undefined ? undefined : 'true'}
            aria-describedby={statusError === undefined ? undefined : 'field-status-error'}
          >
            <option value="">{t('webhooks.anyStatus')}</option>
            {DELIVERY_STATUSES.map((s) => (
              <option value={s} selected={s === status}>
                {t(deliveryStatusKey(s))}
              </option>
            ))}
          </select>
          {statusError !== undefined && (
            <small id="field-status-error" class="field-error">
              {statusError.message} ({statusText})
            </small>
          )}
        </p>
        <p>
          <button type="submit">{t('webhooks.filter')}</button>
        </p>
      </form>
      {deliveries.length === 0 ? (
        statusError === undefined && (
          <Empty>
            {status === '' && before === undefined
              ? t('webhooks.noDeliveries')
              : t('webhooks.noDeliveriesFiltered')}
          </Empty>
        )
      ) : (
        <div class="table-wrap">
          <table class="deliveries">
            <thead>
              <tr>
                <th>{t('webhooks.delivery')}</th>
                <th>{t('webhooks.event')}</th>
                <th>{t('common.status')}</th>
                <th>{t('webhooks.attempts')}</th>
                <th>{t('webhooks.lastAttempt')}</th>
                <th>{t('webhooks.error')}</th>
                <th>{t('webhooks.nextAttempt')}</th>
                <th>{t('common.actions')}</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.map((delivery) => (
                <DeliveryRow context={context} endpointId={endpointId} delivery={delivery} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <nav class="pager">
        {before !== undefined ? <a href={pageHref({})}>{t('webhooks.newest')}</a> : <span />}
        {rows.length > DELIVERIES_PAGE_SIZE && last !== undefined ? (
          <a href={pageHref({ before: String(last.id) })}>{t('webhooks.older')}</a>
        ) : (
          <span />
        )}
      </nav>
    </>
  );
}
