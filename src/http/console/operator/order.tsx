import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, Ident, JsonDetail, Time, toneOf } from '../ui.js';
import { operatorLinks } from './links.js';

/** Characters of a request or an answer shown; the whole is in the admin API's log. */
const JSON_CHARS = 20_000;

/**
 * GET /console/operator/orders/:batchId: one order batch (what the channel sent, what became of
 * each order) and the assets it put licenses on, each a link to its page.
 */
export function orderRoute(app: App): void {
  app.get<{ Params: { batchId: string } }>(
    '/operator/orders/:batchId',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const batch = await app.services.orders.batch(request.params.batchId);
      if (batch === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
      const assets = await app.services.licenseViews.assetsOfBatch(batch.id);
      return sendPage(
        reply,
        <Layout context={context} title={t('drill.orderTitle', { order: batch.channelOrderId })}>
          <dl class="facts" data-order-facts>
            <dt>{t('orders.channelOrderId')}</dt>
            <dd>
              <Ident context={context} value={batch.channelOrderId} max={48} />
            </dd>
            <dt>{t('orders.channel')}</dt>
            <dd>
              <code>{batch.channelCode}</code>
            </dd>
            <dt>{t('orders.app')}</dt>
            <dd>
              {batch.appKey === null ? (
                <code>{batch.appId}</code>
              ) : (
                <a href={operatorLinks.app(batch.appKey)}>
                  <code>{batch.appKey}</code>
                </a>
              )}{' '}
              {batch.appName}
            </dd>
            <dt>{t('common.status')}</dt>
            <dd data-status={batch.status}>
              <Badge tone={toneOf(batch.status)}>{t(`orders.status.${batch.status}` as MessageKey)}</Badge>{' '}
              <small>
                {batch.syncMode}
                {batch.attempts > 0 && ` · ${t('orders.attempts', { attempts: batch.attempts })}`}
              </small>
            </dd>
            <dt>{t('orders.received')}</dt>
            <dd>
              <Time at={batch.receivedAt} />
            </dd>
            <dt>{t('drill.batchId')}</dt>
            <dd>
              <Ident context={context} value={batch.id} max={48} />
            </dd>
            <dt>{t('drill.assets')}</dt>
            <dd data-order-assets>
              {assets.length === 0
                ? '—'
                : assets.map((num, i) => (
                    <>
                      {i > 0 && ', '}
                      <a href={operatorLinks.asset(num)}>
                        <code>{num}</code>
                      </a>
                    </>
                  ))}
            </dd>
          </dl>
          <h2>{t('orders.outcome')}</h2>
          <p>
            <small>{t('orders.ordersOf', { count: batch.orderCount })}</small>
          </p>
          <ul>
            {batch.orders.map((o) => (
              <li data-order={o.licenseOrderId}>
                #{o.sequence} {o.orderType} · {t(`orders.status.${o.status}` as MessageKey)}{' '}
                <code>{o.licenseOrderId}</code>
                {o.reason !== null && <>: {o.reason}</>}
              </li>
            ))}
          </ul>
          <h2>{t('orders.request')}</h2>
          <JsonDetail value={batch.received ?? batch.payload} max={JSON_CHARS} summary={t('orders.show')} />
          <h2>{t('orders.answer')}</h2>
          <JsonDetail value={batch.result} max={JSON_CHARS} summary={t('orders.answer')} />
        </Layout>,
      );
    },
  );
}
