import type { FastifyReply } from 'fastify';
import { ENTERPRISE_LIST_LIMIT, type EnterpriseUsage } from '../../../domain/usage/enterprise-usage.js';
import type { App } from '../../app-type.js';
import { ACCESS } from '../../access/access.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { enterpriseUsageCsv, Holders, ProductCharts, Refusals } from '../usage/enterprise-usage-parts.js';

const USAGE = '/console/enterprise/usage';

/**
 * The page's query: a product of the enterprise and the bucket. Nothing in it names an
 * enterprise: the one shown is the session's, so another's id (in any parameter) reaches nothing.
 */
interface Query {
  product?: string;
  bucket?: string;
}

function parse(query: Query): { product: string; bucket: 'hour' | 'day' } {
  return {
    product: (typeof query.product === 'string' ? query.product : '').trim().slice(0, 255),
    bucket: query.bucket === 'hour' ? 'hour' : 'day',
  };
}

async function usageOf(
  app: App,
  enterpriseId: number,
  form: ReturnType<typeof parse>,
): Promise<EnterpriseUsage> {
  return app.services.usage.enterprise({
    enterpriseId,
    bucket: form.bucket,
    ...(form.product === '' ? {} : { product: form.product }),
  });
}

function sendCsv(reply: FastifyReply, usage: EnterpriseUsage): FastifyReply {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="keyward-usage-${stamp}.csv"`)
    .header('cache-control', 'no-store')
    .send(enterpriseUsageCsv(usage));
}

/** GET /console/enterprise/usage and /usage.csv: the administrator's own enterprise's usage. */
export function enterpriseUsageRoutes(app: App): void {
  app.get<{ Querystring: Query }>(
    '/enterprise/usage',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const { t } = context;
      const form = parse(request.query);
      const usage = await usageOf(app, context.session.member.enterpriseId, form);
      // The product list offered comes from the unfiltered products, so a filter can be undone.
      const all =
        form.product === ''
          ? usage
          : await usageOf(app, context.session.member.enterpriseId, { ...form, product: '' });
      const query = new URLSearchParams({ product: form.product, bucket: form.bucket }).toString();
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.usage')}>
          <p>{t('usage.ent.intro')}</p>
          <form method="get" action={USAGE} class="filters">
            <p class="field">
              <label for="field-product">{t('usage.product')}</label>
              <select id="field-product" name="product">
                <option value="" selected={form.product === ''}>
                  {t('usage.ent.allProducts')}
                </option>
                {all.products.map((p) => (
                  <option value={p.product} selected={form.product === p.product}>
                    {p.product}
                  </option>
                ))}
              </select>
            </p>
            <p class="field">
              <label for="field-bucket">{t('usage.bucket')}</label>
              <select id="field-bucket" name="bucket">
                <option value="day" selected={form.bucket === 'day'}>
                  {t('usage.bucket.day')}
                </option>
                <option value="hour" selected={form.bucket === 'hour'}>
                  {t('usage.bucket.hour')}
                </option>
              </select>
            </p>
            <p>
              <button type="submit">{t('usage.show')}</button>
            </p>
          </form>
          <ProductCharts context={context} usage={usage} csvHref={`${USAGE}.csv?${query}`} />
          <Refusals context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
          <Holders context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
        </Layout>,
      );
    },
  );

  app.get<{ Querystring: Query }>(
    '/enterprise/usage.csv',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      return sendCsv(reply, await usageOf(app, context.session.member.enterpriseId, parse(request.query)));
    },
  );
}
