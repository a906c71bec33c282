import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, Ident, Time } from '../ui.js';
import { durationText } from './duration.js';
import { reasonText } from './lease-reasons.js';
import { operatorLinks } from './links.js';

/**
 * GET /console/operator/leases/:leaseId: one running copy of a licensed product on one machine,
 * every field the Leases table folds away, and a link up to its license, enterprise and employee.
 */
export function leaseRoute(app: App): void {
  app.get<{ Params: { leaseId: string } }>(
    '/operator/leases/:leaseId',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const lease = await app.services.licenseViews.lease(request.params.leaseId);
      if (lease === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
      const holding = app.services.licenseViews.holding(lease);
      return sendPage(
        reply,
        <Layout context={context} title={t('drill.leaseTitle')}>
          <dl class="facts" data-lease-facts data-holding={holding ? 'true' : 'false'}>
            <dt>{t('drill.lease')}</dt>
            <dd>
              <Ident context={context} value={lease.id} max={48} />
            </dd>
            <dt>{t('common.status')}</dt>
            <dd>
              {holding ? (
                <Badge tone="ok">{lease.offline ? t('drill.holdingOffline') : t('drill.holding')}</Badge>
              ) : (
                <Badge tone="neutral">{t('drill.ended')}</Badge>
              )}
              {lease.endReason !== null && (
                <small class="hint"> {reasonText(context, lease.endReason)}</small>
              )}
            </dd>
            <dt>{t('renew.asset')}</dt>
            <dd>
              <a href={operatorLinks.asset(lease.assetNum)}>
                <code>{lease.assetNum}</code>
              </a>
            </dd>
            <dt>{t('leases.product')}</dt>
            <dd>
              {lease.productName ?? '—'}{' '}
              {[lease.crmProductId, lease.productUri]
                .filter((id): id is string => id !== null)
                .map((id) => (
                  <code>{id} </code>
                ))}
            </dd>
            <dt>{t('renew.enterprise')}</dt>
            <dd>
              {lease.enterpriseGlobalId === null ? (
                '—'
              ) : (
                <a href={operatorLinks.enterprise(lease.enterpriseGlobalId)}>{lease.enterpriseName}</a>
              )}
            </dd>
            <dt>{t('leases.holder')}</dt>
            <dd>
              {t(lease.holderKind === 'member' ? 'leases.holder.member' : 'leases.holder.lock')}:{' '}
              {lease.memberGlobalId !== null ? (
                <a href={operatorLinks.member(lease.memberGlobalId)}>{lease.holder}</a>
              ) : lease.holderKind === 'lock' ? (
                <a href={operatorLinks.asset(lease.holder)}>
                  <code>{lease.holder}</code>
                </a>
              ) : (
                <code>{lease.holder}</code>
              )}
              {lease.pool === 'lent' && <small class="hint"> {t('drill.lentPool')}</small>}
            </dd>
            <dt>{t('leases.app')}</dt>
            <dd>
              <a href={operatorLinks.app(lease.appKey)}>
                <code>{lease.appKey}</code>
              </a>{' '}
              {lease.appName}
            </dd>
            <dt>{t('leases.fingerprint')}</dt>
            <dd>
              <Ident context={context} value={lease.fingerprint} max={48} />
            </dd>
            <dt>{t('leases.offline')}</dt>
            <dd>{lease.offline ? t('drill.yes') : t('drill.no')}</dd>
            <dt>{t('leases.created')}</dt>
            <dd>
              <Time at={lease.createdAt} />
            </dd>
            <dt>{t('leases.heartbeat')}</dt>
            <dd>
              <Time at={lease.heartbeatAt} />
            </dd>
            <dt>{t('leases.expires')}</dt>
            <dd>
              <Time at={lease.expiresAt} />
            </dd>
            <dt>{t('leases.ended')}</dt>
            <dd>
              <Time at={lease.endedAt} />
            </dd>
            {lease.seatHeldUntil !== null && (
              <>
                <dt>{t('drill.seatHeldUntil')}</dt>
                <dd>
                  <Time at={lease.seatHeldUntil} />
                </dd>
              </>
            )}
            <dt>{t('leases.used')}</dt>
            <dd>{durationText(t, lease.usedMs)}</dd>
          </dl>
        </Layout>,
      );
    },
  );
}
