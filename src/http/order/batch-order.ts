import { Type } from 'typebox';
import { invalid } from '../../domain/orders/order-errors.js';
import { CommonCode } from '../../errors/common-codes.js';
import type { App } from '../app-type.js';
import { appActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { deny } from '../guards/common.js';
import { requireChannel } from '../guards/order-guard.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import {
  batchOrderSchemas,
  ORDER_BOUNDS,
  OrderResultItem,
  tooDeepMerchandise,
} from './license-order-schemas.js';
import { ACCESS } from '../access/access.js';

const Query = Type.Object({
  ...NonceQuery,
  appKey: Type.Optional(Type.String({ description: "the caller's application key; must be the token's" })),
});

/**
 * Each request's body as it arrived, before validation fills in defaults: the batch keeps it
 * (the operator's Orders page shows what was received, not what Keyward made of it).
 */
const receivedBodies = new WeakMap<object, unknown>();

/** Order op 5: batch-create license orders (new purchase, asset revocation, product revocation). */
export function batchOrderRoute(app: App): void {
  const { merchandise, body } = batchOrderSchemas(app.config.limits);
  app.addSchema(merchandise);
  app.post(
    '/licenseOrder/batchOrder',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'batchOrder',
        summary:
          'Buy or revoke assets and products, one or more orders a call (batch-create basic license orders, order op 5)',
        querystring: Query,
        body,
        response: { 200: Envelope(Type.Array(OrderResultItem)) },
      },
      // Cross checks of the caller come before the body's own validation (DOMAIN.md §2).
      preValidation: async (request) => {
        // Only an async batch is kept (a sync one is applied at once): only its body is copied.
        const { syncMode } = (request.body ?? {}) as { syncMode?: unknown };
        if (syncMode === 'async') {
          try {
            receivedBodies.set(request, structuredClone(request.body));
          } catch {
            // Nested past what a copy can follow (a hostile body): no field of a batch nests, so
            // validation refuses it next, and there is nothing to keep.
          }
        }
        const principal = appOf(request);
        const { appKey } = request.query as { appKey?: unknown };
        if (appKey !== principal.appKey) {
          throw deny(CommonCode.appTokenInvalid, "appKey is not the token's application");
        }
        const { channelCode } = (request.body ?? {}) as { channelCode?: unknown };
        if (typeof channelCode === 'string') requireChannel(principal, channelCode);
        const deep = tooDeepMerchandise(request.body);
        if (deep !== undefined) {
          throw invalid(deep, `nested deeper than ${ORDER_BOUNDS.merchandiseDepth} levels`);
        }
      },
    },
    async (request) =>
      ok(
        await app.services.orders.submit(
          appOf(request),
          request.body,
          appActor(request),
          receivedBodies.get(request),
        ),
      ),
  );
}
