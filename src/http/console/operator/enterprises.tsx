import type { DirectoryEnterprise } from '../../../domain/enterprises/enterprise-directory.repository.js';
import type { App } from '../../app-type.js';
import { operatorContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { DataTable, Empty, Ident, Pager } from '../ui.js';
import { operatorLinks } from './links.js';
import { pageOf } from '../form-fields.js';
import { operatorMay } from '../../access/access.js';

const PAGE_SIZE = 25;
export const ENTERPRISES = '/console/operator/enterprises';

export const enterpriseHref = (globalId: string) => `${ENTERPRISES}/${encodeURIComponent(globalId)}`;

/** Characters of a channel or enterprise code on screen; the whole one on hover. */
const CODE_CHARS = 20;
/** Characters of a global id on screen (a UUID: its start and end). */
const GLOBAL_ID_CHARS = 14;

export function CustomerList(props: { context: ConsoleContext; enterprise: DirectoryEnterprise }) {
  const { t } = props.context;
  const { customers } = props.enterprise;
  return (
    <ul class="customers">
      {customers.map((c) => (
        <li>
          {c.channelCode === null ? '—' : <Ident value={c.channelCode} max={CODE_CHARS} />}{' '}
          {c.channelCustomerId ?? c.crmCustomerId ?? c.id}
          {c.name !== null && ` · ${c.name}`}
          {c.isDefault && ` (${t('ent.default')})`}
        </li>
      ))}
    </ul>
  );
}

function EnterprisesTable(props: { context: ConsoleContext; enterprises: DirectoryEnterprise[] }) {
  const { context } = props;
  const { t } = context;
  return (
    <DataTable
      context={context}
      className="enterprises"
      rows={props.enterprises}
      row={(e) => ({ 'data-enterprise': e.globalId })}
      columns={[
        {
          kind: 'text',
          header: t('ent.name'),
          className: 'name',
          render: (e) => <a href={operatorLinks.enterprise(e.globalId)}>{e.name}</a>,
        },
        {
          kind: 'id',
          header: t('ent.globalId'),
          value: (e) => e.globalId,
          href: (e) => operatorLinks.enterprise(e.globalId),
          max: GLOBAL_ID_CHARS,
        },
        { kind: 'code', header: t('ent.code'), value: (e) => e.code, max: CODE_CHARS },
        {
          kind: 'text',
          header: t('ent.customers'),
          render: (e) => <CustomerList context={context} enterprise={e} />,
        },
        { kind: 'number', header: t('ent.members'), value: (e) => e.memberCount },
        { kind: 'number', header: t('ent.memberLimit'), value: (e) => e.memberLimit ?? t('ent.noLimit') },
        { kind: 'time', header: t('common.created'), value: (e) => e.createdAt },
      ]}
    />
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
            <EnterprisesTable context={context} enterprises={found.list} />
          )}
          <Pager context={context} page={page} pageSize={PAGE_SIZE} total={found.total} href={href} />
        </Layout>,
      );
    },
  );
}
