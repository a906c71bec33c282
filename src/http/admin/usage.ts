import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { StringEnum } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Id = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: 255, description }));
const Instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

const Query = Type.Object({
  product: Id('crmProductId or productUri'),
  enterprise: Id("an enterprise's global id, code or name (any case)"),
  app: Id("an app's key, or a relay's id for the usage it reported"),
  from: Instant(
    'ISO 8601 date-time: the first bucket is the one it falls in (default: 30 days, or 48 hours, back)',
  ),
  to: Instant('ISO 8601 date-time: the last bucket is the one it falls in (default: the current one)'),
  bucket: Type.Optional(StringEnum(['hour', 'day'] as const)),
});

/**
 * `keyward usage`: seats per bucket (peak and seat-hours against seats licensed), refused
 * check-outs by code, consumption, and the licenses at capacity or least used.
 */
export function usageRoute(app: App): void {
  app.get(
    '/usage',
    { config: { access: adminMay('usage') }, schema: { querystring: Query } },
    async (request) => {
      const { from, to, ...filters } = request.query;
      return app.services.usage.report({
        ...filters,
        ...(from === undefined ? {} : { from: new Date(from) }),
        ...(to === undefined ? {} : { to: new Date(to) }),
      });
    },
  );
}
