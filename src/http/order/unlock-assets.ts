import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { NonceQuery } from '../schema-types.js';
import { LockResults, lockBody } from './lock-assets.js';
import { ACCESS } from '../access/access.js';

/** Order op 7: enable refillable and large-customer locks. */
export function unlockAssetsRoute(app: App): void {
  app.post(
    '/asset/unlock',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'unlockAssets',
        summary: 'Enable disabled USB locks again (batch-enable physical locks, order op 7)',
        querystring: Type.Object(NonceQuery),
        body: lockBody(app.config.limits.arrayElements),
        response: { 200: LockResults },
      },
    },
    async (request) =>
      ok(
        await app.services.assets.setLocked({
          scope: appOf(request),
          ...request.body,
          locked: false,
          actor: appActor(request),
        }),
      ),
  );
}
