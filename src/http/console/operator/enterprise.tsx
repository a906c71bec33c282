import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app-type.js';
import { operatorContext } from '../context.js';
import { sendErrorPage } from '../error-page.js';
import { Layout } from '../layout.js';
import { redirectTo, sendPage } from '../render.js';
import { CompactTime, Csrf, DataTable, Empty, Field, Notice, Time, type ConsoleError } from '../ui.js';
import type { LicenseCursor } from '../../../domain/licenses/license-views.service.js';
import { Sparkline } from '../usage/chart.js';
import { LicensesTable } from './drilldown-tables.js';
import { operatorLinks } from './links.js';
import { Can } from '../can.js';
import { ENTERPRISES, enterpriseHref } from './enterprises.js';
import { ExpiringLicenses } from './expiring-licenses.js';
import { consoleRequest } from './form.js';
import { formText } from '../form-fields.js';
import { operatorMay } from '../../access/access.js';

type Params = { Params: { globalId: string } };
type PageQuery = { Querystring: { done?: string; after?: string } };

/** Audit rows shown on an enterprise's page; the Audit page filtered to it has the rest. */
const RECENT_AUDIT = 10;
/** Days of the usage trend drawn on an enterprise's page. */
const TREND_DAYS = 30;

/** `?after=` of the licenses' pager: `<asset number>~<product id>`, where the last page ended. */
function licenseCursorOf(value: string | undefined): LicenseCursor | undefined {
  const match = /^(.{1,200})~(\d{1,18})$/.exec(value ?? '');
  return match ? [match[1] as string, Number(match[2])] : undefined;
}

/** The member limit as the admin API takes it: 1 to 1,000,000, or none. */
const MAX_LIMIT = 1_000_000;

/** The enterprise's licenses ending soon shown at most (`keyward licenses expiring --enterprise` lists all). */
const RENEWALS_SHOWN = 50;

async function showEnterprise(
  app: App,
  request: FastifyRequest<Params & Partial<PageQuery>>,
  reply: FastifyReply,
  state: { error?: ConsoleError; limitText?: string; limitSet?: boolean } = {},
) {
  const context = operatorContext(request);
  const { t } = context;
  const { globalId } = request.params;
  const now = Date.now();
  const after = licenseCursorOf(request.query?.after);
  const entry = await app.services.enterprises.directoryEntry(globalId);
  if (!entry) return sendErrorPage(request, reply, 404, 'error.notFound');
  const views = app.services.licenseViews;
  const [shown, ending, licenses, totals, machines, usage, audit] = await Promise.all([
    app.services.enterprises.show(globalId),
    app.services.licenses.expiring({ enterprise: globalId, limit: RENEWALS_SHOWN + 1 }),
    views.enterpriseLicenses(globalId, after),
    views.enterpriseTotals(globalId),
    views.enterpriseMachines(globalId),
    app.services.usage.report({
      enterprise: globalId,
      bucket: 'day',
      from: new Date(now - TREND_DAYS * 86_400_000),
    }),
    app.services.audit.list({ enterprise: globalId, limit: RECENT_AUDIT }),
  ]);
  const here = operatorLinks.enterprise(globalId);
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
        <dt>{t('drill.licenses')}</dt>
        <dd data-license-count>
          {t('drill.licensesOnAssets', { licenses: totals.licenses, assets: totals.assets })}
        </dd>
        <dt>{t('drill.machinesNow')}</dt>
        <dd data-machines-online={machines.online} data-machines-offline={machines.offline}>
          {t('drill.onlineOffline', { online: machines.online, offline: machines.offline })}
        </dd>
        <dt>{t('ent.memberLimit')}</dt>
        <dd data-member-limit>{entry.memberLimit ?? t('ent.noLimit')}</dd>
        <dt>{t('common.created')}</dt>
        <dd>
          <Time at={entry.createdAt} />
        </dd>
      </dl>
      <section class="enterprise-usage" data-enterprise-usage>
        <h2>{t('drill.usage', { days: TREND_DAYS })}</h2>
        <p>
          <Sparkline
            label={t('drill.peakSeats')}
            values={usage.series.map((p) => p.peakSeats)}
            className="seats"
          />{' '}
          <a href={operatorLinks.enterpriseUsage(globalId)}>{t('drill.usageLink')}</a>
        </p>
      </section>
      <section data-enterprise-licenses id="licenses">
        <h2>{t('drill.licenses')}</h2>
        <LicensesTable context={context} licenses={licenses.licenses} showAsset={true} />
        <nav class="pager">
          {after !== undefined ? <a href={`${here}#licenses`}>{t('drill.first')}</a> : <span />}
          {licenses.next !== undefined ? (
            <a
              href={`${here}?after=${encodeURIComponent(`${licenses.next[0]}~${licenses.next[1]}`)}#licenses`}
            >
              {t('drill.more')}
            </a>
          ) : (
            <span />
          )}
        </nav>
      </section>
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
        <DataTable
          context={context}
          rows={entry.customers}
          className="customers"
          columns={[
            { kind: 'code', header: t('ent.channel'), value: (c) => c.channelCode },
            { kind: 'id', header: t('ent.channelCustomerId'), value: (c) => c.channelCustomerId },
            { kind: 'id', header: t('ent.crmCustomerId'), value: (c) => c.crmCustomerId },
            { kind: 'text', header: t('ent.customerName'), render: (c) => c.name ?? '—' },
            {
              kind: 'text',
              header: t('ent.default'),
              render: (c) => (c.isDefault ? t('common.yes') : t('common.no')),
            },
          ]}
        />
      )}
      <section data-recent-audit>
        <h2>{t('drill.recentAudit')}</h2>
        {audit.length === 0 ? (
          <Empty>{t('drill.noAudit')}</Empty>
        ) : (
          <ul class="recent-audit">
            {audit.map((row) => (
              <li>
                <CompactTime at={row.createdAt} /> <code>{row.action}</code>
                {row.operator !== null && (
                  <>
                    {' · '}
                    {row.operatorId === null ? (
                      row.operator
                    ) : (
                      <a href={operatorLinks.operator(row.operatorId)}>{row.operator}</a>
                    )}
                  </>
                )}
              </li>
            ))}
          </ul>
        )}
        <p>
          <a href={`/console/operator/audit?enterprise=${encodeURIComponent(globalId)}`}>
            {t('drill.auditLink')}
          </a>
        </p>
      </section>
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
  app.get<Params & PageQuery>(
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
