import type { App } from '../../app-type.js';
import { operatorMay } from '../../access/access.js';
import { operatorContext } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { Field } from '../ui.js';
import {
  parseUsageQuery,
  readUsage,
  sendUsageCsv,
  usageQueryString,
  type UsagePageQuery,
} from '../usage/usage-filter.js';
import { UsageFilterForm, usageErrorOf } from '../usage/usage-form.js';
import { LicenseTable, PlatformCharts, SaturatedCharts, usageCsv } from '../usage/usage-parts.js';
import { ViaRelay } from '../usage/via-relay.js';

const USAGE = '/console/operator/usage';
const FIELDS = ['product', 'enterprise', 'app', 'bucket', 'from', 'to'] as const;

/** The page's filter as `GET /admin/usage` takes it: the report and each license at capacity. */
async function reportOf(app: App, query: UsagePageQuery) {
  const parsed = parseUsageQuery(query);
  const { form } = parsed;
  const read = await readUsage(parsed, (range) =>
    app.services.usage.saturation({
      bucket: form.bucket,
      ...range,
      ...(form.product === '' ? {} : { product: form.product }),
      ...(form.enterprise === '' ? {} : { enterprise: form.enterprise }),
      ...(form.app === '' ? {} : { app: form.app }),
    }),
  );
  return { form, read };
}

/**
 * GET /console/operator/usage and /usage.csv: `GET /admin/usage` per product, enterprise and app
 * (or relay), saturation first (each license at capacity), then the least used, then the
 * platform's total and what of it relays reported.
 */
export function usageRoutes(app: App): void {
  app.get<{ Querystring: UsagePageQuery }>(
    '/operator/usage',
    { config: { access: operatorMay('usage') } },
    async (request, reply) => {
      const context = operatorContext(request);
      const { t } = context;
      const { form, read } = await reportOf(app, request.query);
      const report = read.data;
      const error = read.problem === undefined ? undefined : usageErrorOf(t, read.problem);
      return sendPage(
        reply,
        <Layout context={context} title={t('nav.usage')}>
          <UsageFilterForm context={context} action={USAGE} form={form} error={error}>
            <Field
              name="enterprise"
              label={t('usage.enterprise')}
              value={form.enterprise}
              maxLength={255}
              error={error}
            />
            <Field name="app" label={t('usage.app')} value={form.app} maxLength={100} error={error} />
          </UsageFilterForm>
          {report !== undefined && (
            <>
              <SaturatedCharts context={context} report={report} />
              <LicenseTable
                context={context}
                title={t('usage.leastUsed')}
                intro={t('usage.leastUsedIntro', { utilization: t('usage.utilizationDefined') })}
                lines={report.leastUsed}
                kind="least-used"
              />
              <PlatformCharts
                context={context}
                report={report}
                csvHref={`${USAGE}.csv?${usageQueryString(form, FIELDS)}`}
              />
              {/* Each relay's own usage: the same page, range and filter, narrowed to the relay. */}
              <ViaRelay
                context={context}
                lines={report.viaRelay}
                href={(relayId) => `${USAGE}?${usageQueryString({ ...form, app: relayId }, FIELDS)}`}
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
    async (request, reply) => sendUsageCsv(reply, (await reportOf(app, request.query)).read, usageCsv),
  );
}
