import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

/** Ops 6–7 take 1–1,000 numbers a call (DOMAIN.md §6), within the general array limit. */
export function lockBody(arrayElements: number) {
  return Type.Object({
    assetNums: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1,
      maxItems: Math.min(1000, arrayElements),
    }),
    operatorIdentity: Type.String({
      minLength: 1,
      maxLength: 255,
      description: "operator's name, mobile or e-mail",
    }),
  });
}

export const LockResults = Envelope(
  Type.Array(
    Type.Object({
      assetNum: Type.String(),
      status: Type.Integer({
        description: '1 done (or already so), 2 no such lock, 3 the lock was revoked, 4 not a lockable type',
      }),
    }),
  ),
);

/** Order op 6: disable refillable and large-customer locks. */
export function lockAssetsRoute(app: App): void {
  app.post(
    '/asset/lock',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'lockAssets',
        summary: 'Disable USB locks (batch-disable physical locks, order op 6)',
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
          locked: true,
          actor: appActor(request),
        }),
      ),
  );
}
