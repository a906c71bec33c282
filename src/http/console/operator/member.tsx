import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, Ident, Time } from '../ui.js';
import { MachinesTable } from './drilldown-tables.js';
import { operatorLinks } from './links.js';

/**
 * GET /console/operator/members/:globalId: an employee as support needs them: whose they are, the
 * assets assigned to them and the machines they ran ("Alice cannot start the software").
 */
export function memberRoute(app: App): void {
  app.get<{ Params: { globalId: string } }>(
    '/operator/members/:globalId',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const found = await app.services.licenseViews.member(request.params.globalId);
      if (found === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
      const { member, machines } = found;
      return sendPage(
        reply,
        <Layout context={context} title={member.name ?? member.account}>
          <dl class="facts" data-member-facts>
            <dt>{t('drill.account')}</dt>
            <dd>
              <code>{member.account}</code>
              {member.deleted && (
                <>
                  {' '}
                  <Badge tone="bad">{t('drill.deleted')}</Badge>
                </>
              )}
            </dd>
            <dt>{t('drill.globalId')}</dt>
            <dd>
              <Ident context={context} value={member.globalId} max={40} />
            </dd>
            <dt>{t('renew.enterprise')}</dt>
            <dd>
              <a href={operatorLinks.enterprise(member.enterpriseGlobalId)}>{member.enterpriseName}</a>
            </dd>
            <dt>{t('drill.role')}</dt>
            <dd>{member.identity === 'admin' ? t('drill.admin') : t('drill.employee')}</dd>
            <dt>{t('drill.department')}</dt>
            <dd>{member.departmentName ?? '—'}</dd>
            <dt>{t('common.created')}</dt>
            <dd>
              <Time at={member.createdAt} />
            </dd>
            <dt>{t('drill.assets')}</dt>
            <dd data-assets>
              {member.assets.length === 0
                ? '—'
                : member.assets.map((a, i) => (
                    <>
                      {i > 0 && ', '}
                      <a href={operatorLinks.asset(a.assetNum)}>
                        <code>{a.assetNum}</code>
                      </a>
                    </>
                  ))}
            </dd>
          </dl>
          <section data-machines>
            <h2>{t('drill.machines')}</h2>
            <MachinesTable context={context} machines={machines} />
          </section>
        </Layout>,
      );
    },
  );
}
