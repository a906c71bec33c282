import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { sendErrorPage } from '../error-page.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { DataTable, Empty, Ident } from '../ui.js';
import { productsOf } from './asset-products.js';
import { enterpriseAssets } from './enterprise-assets.js';
import { memberPath } from './forms.js';
import { ACCESS } from '../../access/access.js';

/** Characters of a product's URI on screen; the whole one on hover. */
const PRODUCT_CHARS = 28;

/** GET /console/enterprise/assets/:assetId: what is on one asset (member op 7) and who holds it. */
export function assetPageRoute(app: App): void {
  app.get<{ Params: { assetId: string } }>(
    '/enterprise/assets/:assetId',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const { t } = context;
      const enterpriseId = context.session.member.enterpriseId;
      let view;
      try {
        view = await app.services.memberAssets.merchandiseProducts(enterpriseId, request.params.assetId);
      } catch (error) {
        // Another enterprise's asset is not found here, exactly like one that does not exist.
        const absent = [MemberCode.assetNotFound, MemberCode.notBound] as string[];
        if (error instanceof KeywardError && absent.includes(error.code)) {
          return sendErrorPage(request, reply, 404, 'error.notFound');
        }
        throw error;
      }
      const { assets } = await enterpriseAssets(app.services, enterpriseId);
      const asset = assets.find((a) => a.assetId === request.params.assetId);
      const holderId = asset?.cloudAccountGlobalId ?? null;
      const holder =
        holderId === null
          ? undefined
          : (await app.services.members.findByGlobalIds(enterpriseId, [holderId])).get(holderId);
      const lines = productsOf(view);
      return sendPage(
        reply,
        <Layout context={context} title={asset?.assetNum ?? request.params.assetId}>
          <p>
            <a href="/console/enterprise/assets">{t('asset.back')}</a>
          </p>
          <p>
            {t('asset.holder')}:{' '}
            {holder === undefined ? (
              t('asset.unassigned')
            ) : (
              <a href={memberPath(holder.globalId)}>{holder.account}</a>
            )}
          </p>
          {lines.length === 0 ? (
            <Empty>{t('asset.noProducts')}</Empty>
          ) : (
            <DataTable
              context={context}
              className="asset-products"
              rows={lines}
              columns={[
                {
                  kind: 'text',
                  header: t('asset.product'),
                  render: (p) => p.name,
                  sub: (p) => <Ident value={p.uri} max={PRODUCT_CHARS} />,
                },
                { kind: 'text', header: t('asset.merchandise'), render: (p) => p.merchandise ?? '—' },
                { kind: 'time', header: t('asset.validFrom'), value: (p) => p.start },
                { kind: 'time', header: t('asset.validTo'), value: (p) => p.end },
                { kind: 'number', header: t('asset.concurrent'), value: (p) => p.concurrent },
                {
                  kind: 'text',
                  header: t('asset.trial'),
                  render: (p) => (p.trial ? t('common.yes') : t('common.no')),
                },
              ]}
            />
          )}
        </Layout>,
      );
    },
  );
}
