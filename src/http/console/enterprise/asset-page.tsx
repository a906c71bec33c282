import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { sendErrorPage } from '../error-page.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Empty, Time } from '../ui.js';
import { productsOf } from './asset-products.js';
import { enterpriseAssets } from './enterprise-assets.js';
import { memberPath } from './forms.js';
import { ACCESS } from '../../access/access.js';

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
            <div class="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th>{t('asset.product')}</th>
                    <th>{t('asset.merchandise')}</th>
                    <th>{t('asset.validFrom')}</th>
                    <th>{t('asset.validTo')}</th>
                    <th>{t('asset.concurrent')}</th>
                    <th>{t('asset.trial')}</th>
                  </tr>
                </thead>
                <tbody>
                  {lines.map((p) => (
                    <tr>
                      <td>
                        {p.name} <small>{p.uri}</small>
                      </td>
                      <td>{p.merchandise ?? '—'}</td>
                      <td>
                        <Time at={p.start} />
                      </td>
                      <td>
                        <Time at={p.end} />
                      </td>
                      <td>{p.concurrent ?? '—'}</td>
                      <td>{p.trial ? t('common.yes') : t('common.no')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </Layout>,
      );
    },
  );
}
