import { Type } from 'typebox';
import { EXPIRING_LIMIT_MAX } from '../../domain/licenses/licenses.service.js';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Query = Type.Object({
  days: Type.Optional(IntLike({ minimum: 1, maximum: 3650 })),
  enterprise: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "an enterprise's global id" }),
  ),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: EXPIRING_LIMIT_MAX })),
});

/**
 * `keyward licenses expiring`: licenses (a product on an asset) ending within `days`
 * (LICENSE_EXPIRING_DAYS unless given), soonest first, with their seats' use now.
 */
export function listExpiringLicensesRoute(app: App): void {
  app.get(
    '/licenses/expiring',
    { config: { access: adminMay('read') }, schema: { querystring: Query } },
    async (request) => {
      const q = request.query;
      const days = q.days ?? app.services.licenses.defaultDays;
      const licenses = await app.services.licenses.expiring({
        days,
        ...(q.enterprise === undefined ? {} : { enterprise: q.enterprise }),
        limit: q.limit ?? 100,
      });
      return { days, licenses };
    },
  );
}
