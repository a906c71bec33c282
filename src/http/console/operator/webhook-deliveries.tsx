import { may } from '../can.js';
import {
  DELIVERY_STATUSES,
  type AdminDeliveryRow,
  type DeliveryStatus,
} from '../../../domain/webhooks/webhook-admin.repository.js';
import type { ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import {
  ActionButton,
  Badge,
  CompactTime,
  DataTable,
  Empty,
  Ident,
  toneOf,
  type ConsoleError,
} from '../ui.js';
import { StoredError } from './webhook-errors.js';
import { errorBeyondStatus, Outcome } from './webhook-parts.js';
import { endpointHref, WEBHOOKS } from './webhooks-filter.js';

/** Deliveries a page shows, newest first; older ones are a link away. */
export const DELIVERIES_PAGE_SIZE = 50;

const deliveryStatusKey = (status: DeliveryStatus): MessageKey => `webhooks.delivery.${status}`;

/** Characters of an event's id on screen; the whole one on hover. */
const EVENT_ID_CHARS = 14;

function DeliveriesTable(props: {
  context: ConsoleContext;
  endpointId: string;
  deliveries: AdminDeliveryRow[];
}) {
  const { context, endpointId } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="deliveries"
      rows={props.deliveries}
      row={(d) => ({ 'data-delivery': d.id, 'data-status': d.status })}
      columns={[
        { kind: 'number', header: t('webhooks.delivery'), value: (d) => d.id },
        {
          kind: 'code',
          header: t('webhooks.event'),
          value: (d) => d.eventType,
          sub: (d) => <Ident context={context} value={d.eventId} max={EVENT_ID_CHARS} />,
        },
        {
          kind: 'text',
          header: t('common.status'),
          cell: (d) => ({ class: `status status-${d.status}` }),
          render: (d) => <Badge tone={toneOf(d.status)}>{t(deliveryStatusKey(d.status))}</Badge>,
        },
        { kind: 'number', header: t('webhooks.attempts'), value: (d) => d.attempts },
        {
          kind: 'text',
          header: t('common.inUtc', { header: t('webhooks.lastAttempt') }),
          render: (d) =>
            d.lastAttemptAt === null ? (
              <span class="hint">{t('webhooks.never')}</span>
            ) : (
              <>
                <CompactTime at={d.lastAttemptAt} />
                {d.attempts > 0 && (
                  <small class="sub">
                    <Outcome
                      context={context}
                      statusCode={d.lastStatusCode}
                      error={d.lastStatusCode === null ? d.lastError : null}
                      latencyMs={d.lastLatencyMs}
                    />
                  </small>
                )}
              </>
            ),
        },
        {
          kind: 'text',
          header: t('webhooks.error'),
          className: 'error',
          render: (d) => {
            const error = errorBeyondStatus(d.lastError, d.lastStatusCode);
            return error === null ? (
              '—'
            ) : (
              <small>
                <StoredError context={context} error={error} />
              </small>
            );
          },
        },
        {
          kind: 'time',
          header: t('webhooks.nextAttempt'),
          value: (d) => (d.status === 'pending' ? d.nextAttemptAt : null),
        },
        {
          kind: 'text',
          header: t('common.actions'),
          className: 'actions',
          render: (d) =>
            d.status === 'delivered' ? (
              <small class="hint">{t('webhooks.deliveredHint')}</small>
            ) : !may(context, 'retry') ? (
              '—'
            ) : (
              <ActionButton
                context={context}
                action={`${WEBHOOKS}/deliveries/${d.id}/retry`}
                label={t('webhooks.retry')}
                fields={{ endpoint: endpointId }}
              />
            ),
        },
      ]}
    />
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
        <DeliveriesTable context={context} endpointId={endpointId} deliveries={deliveries} />
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
