import { Type } from 'typebox';
import { KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';
import type { Holder } from '../../domain/runtime/runtime.service.js';
import type { App } from '../app-type.js';
import { runtimeActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, IntLike, OptionalNonceQuery } from '../schema-types.js';
import { Fingerprint, LeaseAnswer } from './runtime-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  fingerprint: Fingerprint,
  crmProductId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  productUri: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  assetNum: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "the lock's asset number (a lock holder), or which of a member's assets to use",
    }),
  ),
  // Days to run offline; at most the app's setting (90011 past it).
  offlineDays: Type.Optional(IntLike({ minimum: 0, maximum: 365 })),
});

function invalid(message: string): KeywardError {
  return new KeywardError(RuntimeCode.validation, message);
}

/** Runtime: check out a seat of a product for a member (userToken) or a lock (assetNum). */
export function checkOutRoute(app: App): void {
  app.post(
    '/leases',
    {
      config: { access: ACCESS.runtimeReplayable },
      schema: {
        operationId: 'checkOutLease',
        summary: 'Check out a lease: may this machine run the product?',
        querystring: Type.Object(OptionalNonceQuery),
        body: Body,
        response: { 200: Envelope(LeaseAnswer) },
      },
    },
    async (request) => {
      const body = request.body;
      if (body.crmProductId === undefined && body.productUri === undefined) {
        throw invalid('crmProductId: crmProductId or productUri is required');
      }
      const member = request.memberPrincipal;
      let holder: Holder;
      if (member !== undefined) holder = { kind: 'member', member };
      else if (body.assetNum !== undefined) holder = { kind: 'lock', assetNum: body.assetNum };
      else throw invalid('assetNum: a lock holder names its asset number (or send a member userToken)');
      return ok(
        await app.services.runtime.checkOut({
          app: appOf(request),
          holder,
          fingerprint: body.fingerprint,
          product: {
            ...(body.crmProductId === undefined ? {} : { crmProductId: body.crmProductId }),
            ...(body.productUri === undefined ? {} : { productUri: body.productUri }),
          },
          ...(member !== undefined && body.assetNum !== undefined ? { assetNum: body.assetNum } : {}),
          ...(body.offlineDays === undefined ? {} : { offlineDays: body.offlineDays }),
          actor: runtimeActor(request),
        }),
      );
    },
  );
}
