import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Pager } from '../ui.js';

const PAGE_SIZE = 50;

/** GET /console/enterprise: the enterprise's employees, searched and paged by the server (member op 5). */
export function membersRoute(app: App): void {
  app.get<{ Querystring: { q?: string; page?: string } }>('/enterprise', async (request, reply) => {
    const context = enterpriseContext(request);
    const { t } = context;
    const keyword = (request.query.q ?? '').slice(0, 100);
    const page = Math.max(1, Math.min(100000, Number.parseInt(request.query.page ?? '1', 10) || 1));
    const list = await app.services.members.list(context.session.member.enterpriseId, {
      pageNum: page,
      pageSize: PAGE_SIZE,
      keyword,
    });
    const href = (p: number) => `/console/enterprise?${new URLSearchParams({ q: keyword, page: String(p) })}`;
    return sendPage(
      reply,
      <Layout context={context} title={t('nav.members')}>
        <form method="get" action="/console/enterprise" class="filters">
          <input type="search" name="q" value={keyword} aria-label={t('common.search')} />
          <button type="submit">{t('common.search')}</button>
        </form>
        {list.list.length === 0 ? (
          <Empty>{t('common.none')}</Empty>
        ) : (
          <div class="table-wrap">
            <table>
              <thead>
                <tr>
                  <th>{t('signIn.userName')}</th>
                  <th>Name</th>
                  <th>Assets</th>
                </tr>
              </thead>
              <tbody>
                {list.list.map((m) => (
                  <tr>
                    <td>{m.userName}</td>
                    <td>{m.name}</td>
                    <td>{m.assetNums.join(', ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager context={context} page={page} pageSize={PAGE_SIZE} total={list.total} href={href} />
      </Layout>,
    );
  });
}
