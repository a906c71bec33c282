import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AssetProductsView } from '../../../domain/member-assets/asset-tree.js';
import type { MemberRecord } from '../../../domain/members/members.repository.js';
import type { App } from '../../app-type.js';
import { enterpriseContext, type ConsoleContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import {
  ActionButton,
  CompactTime,
  Csrf,
  DataTable,
  Empty,
  Field,
  Notice,
  Pager,
  type ConsoleError,
} from '../ui.js';
import { enterpriseLinks } from '../operator/links.js';
import { productsOf, type ProductLine } from './asset-products.js';
import { enterpriseAssets } from './enterprise-assets.js';
import { doneOf, memberPath } from './forms.js';
import { pageOf } from '../form-fields.js';
import { ACCESS } from '../../access/access.js';

/** Characters of an asset number on screen; the whole one on hover. */
const ASSET_CHARS = 20;

/** Assets a page: each row asks member op 7 for its products, so pages stay short. */
export const ASSETS_PAGE_SIZE = 20;

interface AssetRow {
  assetId: string;
  assetNum: string;
  isLock: boolean;
  lent: boolean;
  holder: MemberRecord | undefined;
  products: ProductLine[];
}

function Products(props: { lines: ProductLine[] }) {
  if (props.lines.length === 0) return <span>—</span>;
  return (
    <ul class="plain">
      {props.lines.map((p) => (
        <li>
          {p.name} (<CompactTime at={p.start} /> – <CompactTime at={p.end} />)
        </li>
      ))}
    </ul>
  );
}

function AssetsPage(props: {
  context: ConsoleContext;
  rows: AssetRow[];
  page: number;
  total: number;
  error?: ConsoleError | undefined;
  done?: string | undefined;
  values?: { assetNum?: string; account?: string };
}) {
  const { context, rows, page, total, error, done } = props;
  const { t } = context;
  return (
    <Layout context={context} title={t('nav.assets')}>
      <Notice context={context} error={error} done={done} />
      {total === 0 ? (
        <Empty>{t('asset.emptyAll')}</Empty>
      ) : (
        <DataTable
          context={context}
          className="assets"
          rows={rows}
          row={(r) => ({ 'data-asset': r.assetNum })}
          columns={[
            {
              kind: 'id',
              header: t('asset.number'),
              value: (r) => r.assetNum,
              href: (r) => enterpriseLinks.asset(r.assetId),
              max: ASSET_CHARS,
              sub: (r) => r.isLock && <span class="tag">{t('asset.isLock')}</span>,
            },
            {
              kind: 'text',
              header: t('common.inUtc', { header: t('asset.products') }),
              render: (r) => <Products lines={r.products} />,
            },
            {
              kind: 'text',
              header: t('asset.holder'),
              render: (r) =>
                r.holder === undefined ? (
                  r.isLock ? (
                    '—'
                  ) : (
                    t('asset.unassigned')
                  )
                ) : (
                  <a href={enterpriseLinks.member(r.holder.globalId)}>
                    {r.holder.account} ({r.holder.name ?? ''})
                  </a>
                ),
            },
            {
              kind: 'text',
              header: t('asset.lent'),
              render: (r) => (r.lent ? t('common.yes') : t('common.no')),
            },
            {
              kind: 'text',
              header: t('common.actions'),
              className: 'actions',
              render: (r) =>
                r.holder !== undefined &&
                !r.isLock && (
                  <ActionButton
                    context={context}
                    action={`${memberPath(r.holder.globalId)}/unassign`}
                    label={t('asset.unassign')}
                    confirm={t('asset.unassignConfirm', { asset: r.assetNum })}
                    fields={{ assetNum: r.assetNum, next: 'assets' }}
                  />
                ),
            },
          ]}
        />
      )}
      {total > 0 && (
        <Pager
          context={context}
          page={page}
          pageSize={ASSETS_PAGE_SIZE}
          total={total}
          href={(p) => `/console/enterprise/assets?page=${p}`}
        />
      )}
      <section>
        <h2>{t('asset.assignTitle')}</h2>
        <p>{t('asset.assignHint')}</p>
        <form method="post" action="/console/enterprise/assets/assign" class="filters">
          <Csrf context={context} />
          <Field
            name="assetNum"
            label={t('asset.number')}
            value={props.values?.assetNum}
            required
            maxLength={64}
            error={error}
          />
          <Field
            name="account"
            label={t('asset.employeeAccount')}
            value={props.values?.account}
            required
            maxLength={100}
            error={error}
          />
          <button type="submit">{t('asset.assign')}</button>
        </form>
      </section>
    </Layout>
  );
}

/** One page of the enterprise's assets (member op 6), each with its products (op 7) and holder. */
export async function sendAssetsPage(
  app: App,
  request: FastifyRequest,
  reply: FastifyReply,
  page: number,
  outcome: {
    error?: ConsoleError;
    done?: string;
    status?: number;
    values?: { assetNum?: string; account?: string };
  } = {},
) {
  const context = enterpriseContext(request);
  const enterpriseId = context.session.member.enterpriseId;
  const { assets, lockNums } = await enterpriseAssets(app.services, enterpriseId);
  const shown = assets.slice((page - 1) * ASSETS_PAGE_SIZE, page * ASSETS_PAGE_SIZE);
  const holders = await app.services.members.findByGlobalIds(
    enterpriseId,
    shown.flatMap((a) => (a.cloudAccountGlobalId === null ? [] : [a.cloudAccountGlobalId])),
  );
  const products: AssetProductsView[] = await Promise.all(
    shown.map((a) => app.services.memberAssets.merchandiseProducts(enterpriseId, a.assetId)),
  );
  const rows = shown.map((a, i) => ({
    assetId: a.assetId,
    assetNum: a.assetNum,
    isLock: lockNums.has(a.assetNum),
    lent: a.borrowedFlag,
    holder: a.cloudAccountGlobalId === null ? undefined : holders.get(a.cloudAccountGlobalId),
    products: productsOf(products[i] as AssetProductsView),
  }));
  const { status, ...shownOutcome } = outcome;
  return sendPage(
    reply,
    <AssetsPage context={context} rows={rows} page={page} total={assets.length} {...shownOutcome} />,
    status ?? 200,
  );
}

/** GET /console/enterprise/assets */
export function assetsRoute(app: App): void {
  app.get<{ Querystring: { page?: string } }>(
    '/enterprise/assets',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const done = doneOf(request);
      const { t } = enterpriseContext(request);
      return sendAssetsPage(app, request, reply, pageOf(request.query.page), {
        ...(done === undefined ? {} : { done: t(done) }),
      });
    },
  );
}
