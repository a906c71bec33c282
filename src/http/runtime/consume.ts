import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery, Nullable } from '../schema-types.js';
import { Amount, Fingerprint, IdempotencyKey, LeaseParams } from './runtime-schemas.js';
import { ACCESS } from '../access/access.js';

/** Runtime: draw an amount from the product's limitAmount, atomically; once per Idempotency-Key. */
export function consumeRoute(app: App): void {
  app.post(
    '/leases/:leaseId/consume',
    {
      config: { access: ACCESS.runtime },
      schema: {
        operationId: 'consumeLease',
        summary: "Consume from the product's amount",
        params: LeaseParams,
        querystring: Type.Object(NonceQuery),
        headers: Type.Object({ 'idempotency-key': Type.Optional(IdempotencyKey) }),
        body: Type.Object({ fingerprint: Fingerprint, amount: Amount }),
        response: {
          200: Envelope(
            Type.Object({
              consumed: Type.Integer({ description: "the product's total consumption" }),
              limit: Nullable(Type.Integer()),
              remaining: Nullable(Type.Integer()),
            }),
          ),
        },
      },
    },
    async (request) =>
      ok(
        await app.services.runtime.consume({
          app: appOf(request),
          leaseId: request.params.leaseId,
          fingerprint: request.body.fingerprint,
          amount: request.body.amount,
          ...(request.headers['idempotency-key'] === undefined
            ? {}
            : { idempotencyKey: request.headers['idempotency-key'] }),
        }),
      ),
  );
}
