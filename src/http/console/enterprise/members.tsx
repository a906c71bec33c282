import type { ListedMemberView } from '../../../domain/members/member-views.js';
import type { App } from '../../app-type.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { DataTable, Empty, InlineList, Notice, Pager } from '../ui.js';
import { enterpriseLinks } from '../operator/links.js';
import { doneOf } from './forms.js';
import { pageOf } from '../form-fields.js';
import { ACCESS } from '../../access/access.js';

/** Employees a page: small enough that a page stays light at any enterprise size. */
export const MEMBERS_PAGE_SIZE = 50;

/** Characters of an account and of an asset number on screen; the whole one on hover. */
const ACCOUNT_CHARS = 24;
const ASSET_CHARS = 20;

function MembersTable(props: { context: ConsoleContext; members: ListedMemberView[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="members"
      rows={props.members}
      row={(m) => ({ 'data-member': m.globalId })}
      columns={[
        {
          kind: 'id',
          header: t('member.account'),
          value: (m) => m.userName,
          href: (m) => enterpriseLinks.member(m.globalId),
          max: ACCOUNT_CHARS,
        },
        { kind: 'text', header: t('member.name'), className: 'name', render: (m) => m.name },
        { kind: 'code', header: t('member.mobile'), value: (m) => m.passwordMobile },
        {
          kind: 'text',
          header: t('member.department'),
          render: (m) => m.departmentName ?? (m.departmentId === null ? '—' : String(m.departmentId)),
        },
        {
          kind: 'text',
          header: t('member.assetsHeld'),
          render: (m) =>
            m.assetNums.length === 0 ? '—' : <InlineList items={m.assetNums} max={ASSET_CHARS} />,
        },
        { kind: 'id', header: t('member.lentLock'), value: (m) => m.borrowNum, max: ASSET_CHARS },
        {
          kind: 'text',
          header: t('common.actions'),
          className: 'actions',
          render: (m) => <a href={enterpriseLinks.member(m.globalId)}>{t('member.manage')}</a>,
        },
      ]}
    />
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
            <MembersTable context={context} members={list.list} />
          )}
          <Pager context={context} page={page} pageSize={MEMBERS_PAGE_SIZE} total={list.total} href={href} />
        </Layout>,
      );
    },
  );
}
