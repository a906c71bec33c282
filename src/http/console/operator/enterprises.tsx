import type { DirectoryEnterprise } from '../../../domain/enterprises/enterprise-directory.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Pager, Time } from '../ui.js';
import { pageOf } from '../form-fields.js';
import { operatorMay } from '../../access/access.js';

const PAGE_SIZE = 25;
export const ENTERPRISES = '/console/operator/enterprises';

export const enterpriseHref = (globalId: string) => `${ENTERPRISES}/${encodeURIComponent(globalId)}`;

export function CustomerList(props: { context: ConsoleContext; enterprise: DirectoryEnterprise }) {
  const { t } = props.context;
  const { customers } = props.enterprise;
  return (
    <ul class="customers">
      {customers.map((c) => (
        <li>
          <code>{c.channelCode ?? '—'}</code> {c.channelCustomerId ?? c.crmCustomerId ?? c.id}
          {c.name !== null && ` · ${c.name}`}
          {c.isDefault && ` (${t('ent.default')})`}
        </li>
      ))}
    </ul>
  );
}

/** GET /console/operator/enterprises?q=: every tenant, searched and paged by the server. */
export function enterprisesRoute(app: App): void {
  app.get<{ Querystring: { q?: string; page?: string } }>(
    '/operator/enterprises',
    { config: { access: operatorMay('read') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const keyword = (request.query.q ?? '').trim().slice(0, 100);
      const page = pageOf(request.query.page);
      const found = await app.services.enterprises.directory({ keyword, page, pageSize: PAGE_SIZE });
      const href = (p: number) => `${ENTERPRISES}?${new URLSearchParams({ q: keyword, page: String(p) })}`;
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.enterprises')}>
          <form method="get" action={ENTERPRISES} class="filters">
            <input
              type="search"
              name="q"
              value={keyword}
              maxLength={100}
              placeholder={t('ent.searchHint')}
              aria-label={t('common.search')}
            />
            <button type="submit">{t('common.search')}</button>
          </form>
          {found.list.length === 0 ? (
            <Empty>{keyword === '' ? t('ent.empty') : t('ent.noMatch', { q: keyword })}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t('ent.name')}</th>
                    <th>{t('ent.code')}</th>
                    <th>{t('ent.customers')}</th>
                    <th>{t('ent.members')}</th>
                    <th>{t('ent.memberLimit')}</th>
                    <th>{t('common.created')}</th>
                  </tr>
                </thead>
                <tbody>
                  {found.list.map((e) => (
                    <tr>
                      <td>
                        <a href={enterpriseHref(e.globalId)}>{e.name}</a>
                        <br />
                        <small>
                          <code>{e.globalId}</code>
                        </small>
                      </td>
                      <td>
                        <code>{e.code}</code>
                      </td>
                      <td>
                        <CustomerList context={context} enterprise={e} />
                      </td>
                      <td>{e.memberCount}</td>
                      <td>{e.memberLimit ?? t('ent.noLimit')}</td>
                      <td>
                        <Time at={e.createdAt} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager context={context} page={page} pageSize={PAGE_SIZE} total={found.total} href={href} />
        </Layout>,
      );
    },
  );
}
