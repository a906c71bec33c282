import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { ActionButton, DataTable, Empty, Notice } from '../ui.js';
import { enterpriseLinks } from '../operator/links.js';
import { enterpriseAssets } from './enterprise-assets.js';
import { doneOf, memberPath } from './forms.js';
import { ACCESS } from '../../access/access.js';

/**
 * GET /console/enterprise/lent-locks: the enterprise's lent locks (member op 8), to whom each is
 * lent, and a return for each lent one. Lending starts from the employee's page, where his assets are.
 */
export function lentLocksRoute(app: App): void {
  app.get(
    '/enterprise/lent-locks',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const { t } = context;
      const enterpriseId = context.session.member.enterpriseId;
      const { locks } = await enterpriseAssets(app.services, enterpriseId);
      const holders = await app.services.members.findByGlobalIds(
        enterpriseId,
        locks.flatMap((l) => (l.cloudAccountGlobalId === null ? [] : [l.cloudAccountGlobalId])),
      );
      const holderOf = (lock: (typeof locks)[number]) =>
        lock.cloudAccountGlobalId === null ? undefined : holders.get(lock.cloudAccountGlobalId);
      const done = doneOf(request);
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.lentLocks')}>
          <Notice context={context} done={done === undefined ? undefined : t(done)} />
          <p>{t('lent.pageHint')}</p>
          {locks.length === 0 ? (
            <Empty>{t('lent.emptyAll')}</Empty>
          ) : (
            <DataTable
              context={context}
              className="lent-locks"
              rows={locks}
              row={(l) => ({ 'data-lock': l.assetNum })}
              columns={[
                {
                  kind: 'id',
                  header: t('lent.lock'),
                  value: (l) => l.assetNum,
                  href: (l) => enterpriseLinks.asset(l.assetId),
                },
                {
                  kind: 'text',
                  header: t('common.status'),
                  render: (l) => (l.borrowedFlag ? t('lent.statusLent') : t('lent.statusFree')),
                },
                {
                  kind: 'text',
                  header: t('lent.lentTo'),
                  render: (l) => {
                    const holder = holderOf(l);
                    return holder === undefined ? (
                      '—'
                    ) : (
                      <a href={memberPath(holder.globalId)}>{holder.account}</a>
                    );
                  },
                },
                {
                  kind: 'text',
                  header: t('common.actions'),
                  className: 'actions',
                  render: (l) => {
                    const holder = holderOf(l);
                    return (
                      holder !== undefined && (
                        <ActionButton
                          context={context}
                          action={`${memberPath(holder.globalId)}/return`}
                          label={t('lent.return')}
                          confirm={t('lent.returnConfirm', { lock: l.assetNum })}
                          fields={{ lock: l.assetNum, next: 'lent-locks' }}
                        />
                      )
                    );
                  },
                },
              ]}
            />
          )}
        </Layout>,
      );
    },
  );
}
