import type { ListedMemberView } from '../../../domain/members/member-views.js';
import type { App } from '../../app-type.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Notice, Pager } from '../ui.js';
import { doneOf, memberPath } from './forms.js';
import { pageOf } from '../form-fields.js';
import { ACCESS } from '../../access/access.js';

/** Employees a page: small enough that a page stays light at any enterprise size. */
export const MEMBERS_PAGE_SIZE = 50;

function MemberRow(props: { context: ConsoleContext; member: ListedMemberView }) {
  const { context, member: m } = props;
  const { t } = context;
  return (
    <tr>
      <td>
        <a href={memberPath(m.globalId)}>{m.userName}</a>
      </td>
      <td>{m.name}</td>
      <td>{m.passwordMobile ?? '—'}</td>
      <td>{m.departmentName ?? (m.departmentId === null ? '—' : String(m.departmentId))}</td>
      <td>{m.assetNums.length === 0 ? '—' : m.assetNums.join(', ')}</td>
      <td>{m.borrowNum ?? '—'}</td>
      <td>
        <a href={memberPath(m.globalId)}>{t('member.manage')}</a>
      </td>
    </tr>
  );
}

/** GET /console/enterprise: the enterprise's employees, searched and paged by the server (member op 5). */
export function membersRoute(app: App): void {
  app.get<{ Querystring: { q?: string; page?: string } }>(
    '/enterprise',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const { t } = context;
      const keyword = (request.query.q ?? '').trim().slice(0, 100);
      const page = pageOf(request.query.page);
      const list = await app.services.members.list(context.session.member.enterpriseId, {
        pageNum: page,
        pageSize: MEMBERS_PAGE_SIZE,
        keyword,
      });
      const href = (p: number) =>
        `/console/enterprise?${new URLSearchParams({ q: keyword, page: String(p) })}`;
      const done = doneOf(request);
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.members')}>
          <Notice context={context} done={done === undefined ? undefined : t(done)} />
          <p class="actions">
            <a href="/console/enterprise/members/new">{t('member.addOne')}</a>
            <a href="/console/enterprise/members/import">{t('member.import')}</a>
          </p>
          <form method="get" action="/console/enterprise" class="filters">
            <input
              type="search"
              name="q"
              value={keyword}
              aria-label={t('member.searchLabel')}
              placeholder={t('member.searchLabel')}
              maxLength={100}
            />
            <button type="submit">{t('common.search')}</button>
          </form>
          {list.list.length === 0 ? (
            <Empty>{keyword === '' ? t('member.emptyAll') : t('member.emptySearch', { q: keyword })}</Empty>
          ) : (
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t('member.account')}</th>
                    <th>{t('member.name')}</th>
                    <th>{t('member.mobile')}</th>
                    <th>{t('member.department')}</th>
                    <th>{t('member.assetsHeld')}</th>
                    <th>{t('member.lentLock')}</th>
                    <th>{t('common.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  {list.list.map((m) => (
                    <MemberRow context={context} member={m} />
                  ))}
                </tbody>
              </table>
            </div>
          )}
          <Pager context={context} page={page} pageSize={MEMBERS_PAGE_SIZE} total={list.total} href={href} />
        </Layout>,
      );
    },
  );
}
