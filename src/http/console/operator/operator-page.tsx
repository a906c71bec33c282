import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import type { MessageKey } from '../i18n/index.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Badge, Ident, Time } from '../ui.js';

/**
 * GET /console/operator/operators/:id: who an operator named in the audit log or on a webhook
 * event is. Their name, email, role and state only: changing them stays on the owners' Operators
 * page, so any role that reads the log may open it.
 */
export function operatorPageRoute(app: App): void {
  app.get<{ Params: { id: string } }>(
    '/operator/operators/:id',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const operator = (await app.services.operators.list()).find((o) => o.id === request.params.id);
      if (operator === undefined) return sendErrorPage(request, reply, 404, 'error.notFound');
      return sendPage(
        reply,
        <Layout context={context} title={t('drill.operatorTitle', { name: operator.name })}>
          <dl class="facts" data-operator-facts>
            <dt>{t('drill.email')}</dt>
            <dd>{operator.email}</dd>
            <dt>{t('drill.role')}</dt>
            <dd>{t(`operators.role.${operator.role}` as MessageKey)}</dd>
            <dt>{t('common.status')}</dt>
            <dd>
              <Badge tone={operator.status === 'active' ? 'ok' : 'bad'}>{operator.status}</Badge>
            </dd>
            <dt>{t('drill.globalId')}</dt>
            <dd>
              <Ident context={context} value={operator.id} max={48} />
            </dd>
            <dt>{t('common.created')}</dt>
            <dd>
              <Time at={operator.createdAt} />
            </dd>
            <dt>{t('drill.lastSignIn')}</dt>
            <dd>
              <Time at={operator.lastSignInAt} />
            </dd>
          </dl>
        </Layout>,
      );
    },
  );
}
