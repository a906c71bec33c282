import type { FastifyReply } from 'fastify';
import type { UsageReport } from '../../../domain/usage/usage.service.js';
import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Field } from '../ui.js';
import {
  parseUsageQuery,
  problemText,
  readUsage,
  usageQueryString,
  type UsagePageQuery,
} from '../usage/usage-filter.js';
import { DateRangeFields, usageErrorOf } from '../usage/usage-form.js';
import { LicenseTable, UsageCharts, usageCsv } from '../usage/usage-parts.js';

const USAGE = '/console/operator/usage';
const FIELDS = ['product', 'enterprise', 'bucket', 'from', 'to'] as const;

/** The page's filter as `GET /admin/usage` takes it. */
async function reportOf(app: App, query: UsagePageQuery) {
  const parsed = parseUsageQuery(query);
  const { form } = parsed;
  const read = await readUsage(parsed, (range) =>
    app.services.usage.report({
      bucket: form.bucket,
      ...range,
      ...(form.product === '' ? {} : { product: form.product }),
      ...(form.enterprise === '' ? {} : { enterprise: form.enterprise }),
    }),
  );
  return { form, read };
}

function sendCsv(reply: FastifyReply, report: UsageReport): FastifyReply {
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, '');
  return reply
    .header('content-type', 'text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="keyward-usage-${stamp}.csv"`)
    .header('cache-control', 'no-store')
    .send(usageCsv(report));
}

/** GET /console/operator/usage and /usage.csv: `GET /admin/usage` per product and enterprise. */
export function usageRoutes(app: App): void {
  app.get<{ Querystring: UsagePageQuery }>(
    '/operator/usage',
    { config: { access: operatorMay('usage') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const { form, read } = await reportOf(app, request.query);
      const report = read.data;
      const fieldError = read.problem === undefined ? undefined : usageErrorOf(t, read.problem);
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.usage')}>
          <form method="get" action={USAGE} class="filters">
            <Field name="product" label={t('usage.product')} value={form.product} maxLength={255} />
            <Field
              name="enterprise"
              label={t('usage.enterprise')}
              value={form.enterprise}
              maxLength={255}
              error={fieldError?.field === 'enterprise' ? fieldError : undefined}
            />
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
          {report !== undefined && (
            <>
              <UsageCharts
                context={context}
                report={report}
                csvHref={`${USAGE}.csv?${usageQueryString(form, FIELDS)}`}
              />
              <LicenseTable
                context={context}
                title={t('usage.atCapacity')}
                lines={report.atCapacity}
                kind="at-capacity"
              />
              <LicenseTable
                context={context}
                title={t('usage.leastUsed')}
                lines={report.leastUsed}
                kind="least-used"
              />
            </>
          )}
        </Layout>,
      );
    },
  );

  app.get<{ Querystring: UsagePageQuery }>(
    '/operator/usage.csv',
    { config: { access: operatorMay('usage') } },
    async (request, reply) => {
      const { read } = await reportOf(app, request.query);
      if (read.problem !== undefined) {
        return reply.code(400).type('text/plain; charset=utf-8').send(problemText(read.problem));
      }
      return sendCsv(reply, read.data);
    },
  );
}
