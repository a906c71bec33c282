import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { LockNum, MemberOnlyParams } from './member-asset-schemas.js';
import { adminOrSelf } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  borrowedUsbKey: LockNum,
  assetIDs: Type.Array(Type.String({ minLength: 1, maxLength: 128 }), {
    minItems: 1,
    maxItems: 1000,
    description: 'ids of assets assigned to the member',
  }),
});

/** Member op 10: lend the entitlements of a member's assets to a lent lock. */
export function borrowAssetsRoute(app: App): void {
  app.post(
    '/enterprise/member/:memberGlobalId/borrow',
    {
      config: { access: ACCESS.member },
      preValidation: adminOrSelf,
      schema: {
        operationId: 'borrowAssets',
        summary:
          "Lend an employee's assets onto the USB lock they carry (lend assets to a lent lock, member op 10)",
        params: MemberOnlyParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Null()) },
      },
    },
    async (request) => {
      await app.services.lending.borrow(
        memberOf(request).enterpriseId,
        request.params.memberGlobalId,
        request.body,
        memberActor(request),
      );
      return ok(null);
    },
  );
}
