import type { FastifyReply } from 'fastify';
import { ENTERPRISE_LIST_LIMIT, type EnterpriseUsage } from '../../../domain/usage/enterprise-usage.js';
import type { App } from '../../app-type.js';
import { ACCESS } from '../../access/access.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { enterpriseUsageCsv, Holders, ProductCharts, Refusals } from '../usage/enterprise-usage-parts.js';
import {
  parseUsageQuery,
  problemText,
  readUsage,
  usageQueryString,
  type ParsedUsageQuery,
  type UsageForm,
} from '../usage/usage-filter.js';
import { DateRangeFields, usageErrorOf } from '../usage/usage-form.js';

const USAGE = '/console/enterprise/usage';
/** The page's own fields: nothing in them names an enterprise (an `enterprise` given is ignored). */
const FIELDS = ['product', 'bucket', 'from', 'to'] as const;

/**
 * The page's query: a product of the enterprise, the bucket and the range. The enterprise shown
 * is the session's, so another's id (in any parameter) reaches nothing.
 */
interface Query {
  product?: string;
  bucket?: string;
  from?: string;
  to?: string;
}

function usageOf(
  app: App,
  enterpriseId: number,
  form: UsageForm,
  range: ParsedUsageQuery['range'],
): Promise<EnterpriseUsage> {
  return app.services.usage.enterprise({
    enterpriseId,
    bucket: form.bucket,
    ...range,
    ...(form.product === '' ? {} : { product: form.product }),
  });
}

/** The page's read, by the session's enterprise id only. */
async function readOf(app: App, enterpriseId: number, query: Query) {
  const parsed = parseUsageQuery(query);
  return { parsed, read: await readUsage(parsed, (range) => usageOf(app, enterpriseId, parsed.form, range)) };
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
      const enterpriseId = context.session.member.enterpriseId;
      const { parsed, read } = await readOf(app, enterpriseId, request.query);
      const { form } = parsed;
      const usage = read.data;
      const fieldError = read.problem === undefined ? undefined : usageErrorOf(t, read.problem);
      // The product list offered comes from the unfiltered products, so a filter can be undone;
      // the one chosen stays offered even when the range holds none of it.
      const all =
        form.product === '' || usage === undefined
          ? usage
          : await usageOf(app, enterpriseId, { ...form, product: '' }, parsed.range);
      const offered = [...new Set([...(all?.products ?? []).map((p) => p.product), form.product])].filter(
        (p) => p !== '',
      );
      const query = usageQueryString(form, FIELDS);
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
                {offered.map((product) => (
                  <option value={product} selected={form.product === product}>
                    {product}
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
            <DateRangeFields context={context} form={form} error={fieldError} />
            <p>
              <button type="submit">{t('usage.show')}</button>
            </p>
          </form>
          {usage !== undefined && (
            <>
              <ProductCharts context={context} usage={usage} csvHref={`${USAGE}.csv?${query}`} />
              <Refusals context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
              <Holders context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
            </>
          )}
        </Layout>,
      );
    },
  );

  app.get<{ Querystring: Query }>(
    '/enterprise/usage.csv',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const { read } = await readOf(app, context.session.member.enterpriseId, request.query);
      if (read.problem !== undefined) {
        return reply.code(400).type('text/plain; charset=utf-8').send(problemText(read.problem));
      }
      return sendCsv(reply, read.data);
    },
  );
}
