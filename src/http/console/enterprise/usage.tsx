import { ENTERPRISE_LIST_LIMIT, type EnterpriseUsage } from '../../../domain/usage/enterprise-usage.js';
import type { App } from '../../app-type.js';
import { ACCESS } from '../../access/access.js';
import { enterpriseContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { enterpriseUsageCsv, Holders, ProductCharts, Refusals } from '../usage/enterprise-usage-parts.js';
import {
  parseUsageQuery,
  readUsage,
  sendUsageCsv,
  usageQueryString,
  type ParsedUsageQuery,
  type UsageForm,
} from '../usage/usage-filter.js';
import { UsageFilterForm, usageErrorOf } from '../usage/usage-form.js';
import { ViaRelay } from '../usage/via-relay.js';

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
      // The products offered are every one in the range (a filter can be undone), read apart when
      // the page shows one product; the one chosen stays offered even when the range holds none.
      const inRange =
        usage === undefined
          ? []
          : form.product === ''
            ? usage.products.map((p) => p.product)
            : await app.services.usage.enterpriseProducts({
                enterpriseId,
                bucket: form.bucket,
                ...parsed.range,
              });
      const offered = [...new Set([...inRange, form.product])].filter((p) => p !== '').sort();
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.usage')}>
          <p>{t('usage.ent.intro')}</p>
          <UsageFilterForm
            context={context}
            action={USAGE}
            form={form}
            error={read.problem === undefined ? undefined : usageErrorOf(t, read.problem)}
            products={offered}
          />
          {usage !== undefined && (
            <>
              <ProductCharts
                context={context}
                usage={usage}
                csvHref={`${USAGE}.csv?${usageQueryString(form, FIELDS)}`}
              />
              <Refusals context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
              <Holders context={context} usage={usage} limit={ENTERPRISE_LIST_LIMIT} />
              <ViaRelay context={context} lines={usage.viaRelay} />
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
      return sendUsageCsv(reply, read, enterpriseUsageCsv);
    },
  );
}
