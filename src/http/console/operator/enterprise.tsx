import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { Csrf, Empty, Field, Notice, Time, type ConsoleError } from '../ui.js';
import { Can } from '../can.js';
import { ENTERPRISES, enterpriseHref } from './enterprises.js';
import { ExpiringLicenses } from './expiring-licenses.js';
import { consoleRequest } from './form.js';
import { formText } from '../form-fields.js';
import { operatorMay } from '../../access/access.js';

type Params = { Params: { globalId: string } };

/** The member limit as the admin API takes it: 1 to 1,000,000, or none. */
const MAX_LIMIT = 1_000_000;

/** The enterprise's licenses ending soon shown at most (`keyward licenses expiring --enterprise` lists all). */
const RENEWALS_SHOWN = 50;

async function showEnterprise(
  app: App,
  request: FastifyRequest<Params>,
  reply: FastifyReply,
  state: { error?: ConsoleError; limitText?: string; limitSet?: boolean } = {},
) {
  const context = operatorContext(request);
  const { t } = context;
  const { globalId } = request.params;
  const now = Date.now();
  const [entry, shown, ending] = await Promise.all([
    app.services.enterprises.directoryEntry(globalId),
    app.services.enterprises.show(globalId),
    app.services.licenses.expiring({ enterprise: globalId, limit: RENEWALS_SHOWN + 1 }),
  ]);
  if (!entry) return sendErrorPage(request, reply, 404, 'error.notFound');
  return sendPage(
    reply,
    <Layout context={context} title={entry.name}>
      <p>
        <a href={ENTERPRISES}>{t('ent.back')}</a>
      </p>
      <Notice
        context={context}
        error={state.error?.field === undefined ? state.error : undefined}
        done={
          state.limitSet === true
            ? t('ent.limitSet', { limit: entry.memberLimit ?? t('ent.noLimit') })
            : undefined
        }
      />
      <dl class="facts">
        <dt>{t('ent.globalId')}</dt>
        <dd>
          <code>{entry.globalId}</code>
        </dd>
        <dt>{t('ent.code')}</dt>
        <dd>
          <code>{entry.code}</code>
        </dd>
        <dt>{t('ent.admin')}</dt>
        <dd>{shown?.adminAccount ?? '—'}</dd>
        <dt>{t('ent.members')}</dt>
        <dd data-member-count>{entry.memberCount}</dd>
        <dt>{t('ent.memberLimit')}</dt>
        <dd data-member-limit>{entry.memberLimit ?? t('ent.noLimit')}</dd>
        <dt>{t('common.created')}</dt>
        <dd>
          <Time at={entry.createdAt} />
        </dd>
      </dl>
      <ExpiringLicenses
        context={context}
        licenses={ending}
        days={app.services.licenses.defaultDays}
        now={now}
        shown={RENEWALS_SHOWN}
        showEnterprise={false}
      />
      <h2>{t('ent.customers')}</h2>
      {entry.customers.length === 0 ? (
        <Empty>{t('ent.noCustomers')}</Empty>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th>{t('ent.channel')}</th>
                <th>{t('ent.channelCustomerId')}</th>
                <th>{t('ent.crmCustomerId')}</th>
                <th>{t('ent.customerName')}</th>
                <th>{t('ent.default')}</th>
              </tr>
            </thead>
            <tbody>
              {entry.customers.map((c) => (
                <tr>
                  <td>
                    <code>{c.channelCode ?? '—'}</code>
                  </td>
                  <td>{c.channelCustomerId ?? '—'}</td>
                  <td>{c.crmCustomerId ?? '—'}</td>
                  <td>{c.name ?? '—'}</td>
                  <td>{c.isDefault ? t('common.yes') : t('common.no')}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Can context={context} permission="write">
        <form method="post" action={`${enterpriseHref(entry.globalId)}/member-limit`}>
          <h2>{t('ent.setLimit')}</h2>
          <Csrf context={context} />
          <Field
            name="memberLimit"
            label={`${t('ent.memberLimit')} — ${t('ent.limitHint')}`}
            type="number"
            value={state.limitText ?? entry.memberLimit ?? ''}
            error={state.error}
          />
          <button type="submit">{t('common.save')}</button>
        </form>
      </Can>
    </Layout>,
    state.error === undefined ? 200 : 400,
  );
}

/** GET /console/operator/enterprises/:globalId and its member-limit form (admin API's service). */
export function enterpriseRoutes(app: App): void {
  app.get<Params & { Querystring: { done?: string } }>(
    '/operator/enterprises/:globalId',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      return showEnterprise(app, request, reply, { limitSet: request.query.done === 'limit' });
    },
  );

  app.post<Params>(
    '/operator/enterprises/:globalId/member-limit',
    { config: { access: operatorMay('write') } },
    async (request, reply) => {
      const { t } = operatorContext(request);
      const text = formText(request, 'memberLimit').trim();
      const limit = text === '' ? null : Number(text);
      if (limit !== null && (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT)) {
        const error = { code: 'invalid_input', message: t('ent.limitInvalid'), field: 'memberLimit' };
        return showEnterprise(app, request, reply, { error, limitText: text });
      }
      const set = await app.services.memberAdmin.setMemberLimit(
        request.params.globalId,
        limit,
        consoleRequest(request),
      );
      if (!set) return sendErrorPage(request, reply, 404, 'error.notFound');
      return redirectTo(reply, `${enterpriseHref(set.enterpriseGlobalId)}?done=limit`);
    },
  );
}
