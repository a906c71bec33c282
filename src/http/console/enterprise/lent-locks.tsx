import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { ActionButton, Empty, Notice } from '../ui.js';
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
      const done = doneOf(request);
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.lentLocks')}>
          <Notice context={context} done={done === undefined ? undefined : t(done)} />
          <p>{t('lent.pageHint')}</p>
          {locks.length === 0 ? (
            <Empty>{t('lent.emptyAll')}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t('lent.lock')}</th>
                    <th>{t('common.status')}</th>
                    <th>{t('lent.lentTo')}</th>
                    <th>{t('common.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  {locks.map((l) => {
                    const holder =
                      l.cloudAccountGlobalId === null ? undefined : holders.get(l.cloudAccountGlobalId);
                    return (
                      <tr>
                        <td>
                          <a href={`/console/enterprise/assets/${encodeURIComponent(l.assetId)}`}>
                            {l.assetNum}
                          </a>
                        </td>
                        <td>{l.borrowedFlag ? t('lent.statusLent') : t('lent.statusFree')}</td>
                        <td>
                          {holder === undefined ? (
                            '—'
                          ) : (
                            <a href={memberPath(holder.globalId)}>{holder.account}</a>
                          )}
                        </td>
                        <td>
                          {holder !== undefined && (
                            <ActionButton
                              context={context}
                              action={`${memberPath(holder.globalId)}/return`}
                              label={t('lent.return')}
                              confirm={t('lent.returnConfirm', { lock: l.assetNum })}
                              fields={{ lock: l.assetNum, next: 'lent-locks' }}
                            />
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </Layout>,
      );
    },
  );
}
