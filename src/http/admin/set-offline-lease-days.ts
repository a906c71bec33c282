import { Type } from 'typebox';
import { OFFLINE_LEASE_MAX_DAYS } from '../../domain/apps/offline-lease.js';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Params = Type.Object({ appKey: Type.String({ minLength: 1, maxLength: 100 }) });
const Body = Type.Object({
  days: IntLike({ minimum: 0, maximum: OFFLINE_LEASE_MAX_DAYS }),
  force: Type.Optional(Type.Boolean({ description: 'needed to change keyward-console' })),
});

/**
 * `keyward app set-offline-days KEY N [--force]`: the longest offline lease the app may hand out;
 * 0: none.
 */
export function setOfflineLeaseDaysRoute(app: App): void {
  app.post(
    '/apps/:appKey/offline-lease-days',
    { config: { access: adminMay('write') }, schema: { params: Params, body: Body } },
    async (request) =>
      app.services.apps.setOfflineLeaseMaxDays(
        request.params.appKey,
        request.body.days,
        operatorRequestOf(request),
        { force: request.body.force === true },
      ),
  );
}
