import {
  BATCH_STATUSES,
  type BatchCursor,
  type BatchStatus,
  type LoggedBatch,
} from '../../../domain/orders/order-log.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, DataTable, Empty, Ident, toneOf } from '../ui.js';
import { operatorLinks } from './links.js';
import { prettyJson } from './form.js';
import { operatorMay } from '../../access/access.js';

const ORDERS = '/console/operator/orders';
const PAGE_SIZE = 20;
/** Characters of one batch's request shown: 20 batches stay well under the page budget. */
const REQUEST_CHARS = 3000;
const RESULT_CHARS = 1500;

const isStatus = (value: unknown): value is BatchStatus =>
  typeof value === 'string' && (BATCH_STATUSES as readonly string[]).includes(value);

/** `after` is `<received, UTC to the microsecond>_<batch id>`: where the previous page ended. */
function cursorOf(value: string | undefined): BatchCursor | undefined {
  const match = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z)_([A-Za-z0-9_-]{1,100})$/.exec(value ?? '');
  if (!match) return undefined;
  return { receivedAt: match[1] as string, id: match[2] as string };
}

/**
 * A JSON value folded into a <details>: a request body can be thousands of characters wide and
 * long, and a table row of them ran off a 1280-pixel screen. The summary says what it is and how
 * large.
 */
function Json(props: { context: ConsoleContext; value: unknown; max: number; summary: string }) {
  const json = prettyJson(props.value, props.max);
  return (
    <details class="json">
      <summary>
        {props.summary} <small>{props.context.t('orders.chars', { size: json.size })}</small>
      </summary>
      <pre>
        {json.text}
        {json.cut && `\n${props.context.t('orders.truncated', { size: json.size })}`}
      </pre>
    </details>
  );
}

/** What the app sent; a row from before the body was kept shows the stored payload, and says so. */
function Received(props: { context: ConsoleContext; batch: LoggedBatch }) {
  const { context, batch } = props;
  const { t } = context;
  if (batch.received !== null)
    return <Json context={context} value={batch.received} max={REQUEST_CHARS} summary={t('orders.show')} />;
  if (batch.payload === null) return <small>{t('orders.notKept')}</small>;
  return (
    <>
      <small class="hint" data-stored-payload>
        {t('orders.storedOnly')}
      </small>
      <Json context={context} value={batch.payload} max={REQUEST_CHARS} summary={t('orders.show')} />
    </>
  );
}

/** An app key is shown whole: `kw_` and 16 characters. */
const APP_KEY_CHARS = 20;
/** Characters of a channel code and of a channel's order id on screen; the whole one on hover. */
const CODE_CHARS = 20;

/** What became of a batch's orders: each linked to its page, and the whole answer folded. */
function Outcome(props: { context: ConsoleContext; batch: LoggedBatch }) {
  const { context, batch } = props;
  const { t } = context;
  return (
    <>
      <small>{t('orders.ordersOf', { count: batch.orderCount })}</small>
      <ul>
        {batch.orders.map((o) => (
          <li data-order={o.licenseOrderId}>
            <a href={operatorLinks.order(o.licenseOrderId)} title={o.licenseOrderId}>
              #{o.sequence}
            </a>{' '}
            {o.orderType} · {t(`orders.status.${o.status}` as MessageKey)}
            {o.reason !== null && (
              <>
                : <span class="reason">{o.reason}</span>
              </>
            )}
          </li>
        ))}
      </ul>
      <Json context={context} value={batch.result} max={RESULT_CHARS} summary={t('orders.answer')} />
    </>
  );
}

function BatchesTable(props: { context: ConsoleContext; batches: LoggedBatch[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="orders"
      rows={props.batches}
      row={(b) => ({ 'data-batch': b.id, 'data-channel-order': b.channelOrderId })}
      columns={[
        {
          kind: 'id',
          header: t('orders.app'),
          value: (b) => b.appKey ?? b.appId,
          href: (b) => (b.appKey === null ? undefined : operatorLinks.app(b.appKey)),
          max: APP_KEY_CHARS,
          sub: (b) => b.appName,
        },
        {
          kind: 'id',
          header: t('orders.channelOrder'),
          className: 'channel-order',
          value: (b) => b.channelOrderId,
          max: CODE_CHARS,
          sub: (b) => <Ident value={b.channelCode} max={CODE_CHARS} />,
        },
        {
          kind: 'text',
          header: t('common.status'),
          cell: (b) => ({ class: `status status-${b.status}`, 'data-status': b.status }),
          render: (b) => (
            <>
              <Badge tone={toneOf(b.status)}>{t(`orders.status.${b.status}` as MessageKey)}</Badge>
              <small class="sub">
                {b.syncMode}
                {b.attempts > 0 && ` · ${t('orders.attempts', { attempts: b.attempts })}`}
              </small>
            </>
          ),
        },
        { kind: 'time', header: t('orders.received'), value: (b) => b.receivedAt },
        {
          kind: 'text',
          header: t('orders.request'),
          className: 'request',
          render: (b) => <Received context={context} batch={b} />,
        },
        {
          kind: 'text',
          header: t('orders.outcome'),
          className: 'outcome',
          render: (b) => <Outcome context={context} batch={b} />,
        },
      ]}
    />
  );
}

/** GET /console/operator/orders: the newest order batches of every app, with what became of them. */
export function ordersRoute(app: App): void {
  app.get<{ Querystring: { status?: string; after?: string } }>(
    '/operator/orders',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const status = isStatus(request.query.status) ? request.query.status : undefined;
      const after = cursorOf(request.query.after);
      // One more than a page: whether there is an older page, without counting the table.
      const rows = await app.services.orders.recentBatches({
        ...(status === undefined ? {} : { status }),
        ...(after === undefined ? {} : { after }),
        limit: PAGE_SIZE + 1,
      });
      const batches = rows.slice(0, PAGE_SIZE);
      const last = batches.at(-1);
      const query = (extra: Record<string, string>) =>
        `${ORDERS}?${new URLSearchParams({ ...(status === undefined ? {} : { status }), ...extra })}`;
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.orders')}>
          <form method="get" action={ORDERS} class="filters">
            <label>
              {t('orders.filterStatus')}{' '}
              <select name="status">
                <option value="">{t('orders.all')}</option>
                {BATCH_STATUSES.map((s) => (
                  <option value={s} selected={s === status}>
                    {t(`orders.status.${s}` as MessageKey)}
                  </option>
                ))}
              </select>
            </label>
            <button type="submit">{t('orders.filter')}</button>
          </form>
          {batches.length === 0 ? (
            <Empty>
              {status === undefined && after === undefined ? t('orders.empty') : t('orders.emptyFiltered')}
            </Empty>
          ) : (
            <BatchesTable context={context} batches={batches} />
          )}
          <nav class="pager">
            {after !== undefined ? <a href={query({})}>{t('orders.newest')}</a> : <span />}
            {rows.length > PAGE_SIZE && last !== undefined ? (
              <a href={query({ after: `${last.cursor.receivedAt}_${last.cursor.id}` })}>
                {t('orders.older')}
              </a>
            ) : (
              <span />
            )}
          </nav>
        </Layout>,
      );
    },
  );
}
