import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { LockNum, MemberOnlyParams } from './member-asset-schemas.js';
import { adminOrSelf } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({ borrowedUsbKey: LockNum });

/** Gives back everything a member lent to a lent lock (an addition to the spec, DOMAIN.md §8). */
export function returnAssetsRoute(app: App): void {
  app.post(
    '/enterprise/member/:memberGlobalId/return',
    {
      config: { access: ACCESS.member },
      preValidation: adminOrSelf,
      schema: {
        operationId: 'returnAssets',
        summary:
          "Take lent assets back from a USB lock (return lent assets, Keyward's addition to member op 10)",
        params: MemberOnlyParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Null()) },
      },
    },
    async (request) => {
      await app.services.lending.giveBack(
        memberOf(request).enterpriseId,
        request.params.memberGlobalId,
        request.body.borrowedUsbKey,
        memberActor(request),
      );
      return ok(null);
    },
  );
}
