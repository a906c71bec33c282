import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, OptionalNonceQuery } from '../schema-types.js';
import { FingerprintBody, LeaseParams } from './runtime-schemas.js';
import { ACCESS } from '../access/access.js';

/**
 * Runtime: end the lease; again for a lease already checked in answers success. An offline lease
 * keeps its seat until it expires (seatFreeAt) unless its app allows early return.
 */
export function checkInRoute(app: App): void {
  app.post(
    '/leases/:leaseId/check-in',
    {
      config: { access: ACCESS.runtimeReplayable },
      schema: {
        operationId: 'checkInLease',
        summary: 'Check a lease in: its seat is free at seatFreeAt',
        params: LeaseParams,
        querystring: Type.Object(OptionalNonceQuery),
        body: FingerprintBody,
        response: {
          200: Envelope(
            Type.Object({
              usedSeconds: Type.Integer(),
              seatFreeAt: Type.Integer({
                description:
                  "epoch ms when the lease's seat is free for another machine: now for an online lease; " +
                  'for an offline lease its expiry, unless the application allows early return',
              }),
            }),
          ),
        },
      },
    },
    async (request) =>
      ok(
        await app.services.runtime.checkIn({
          app: appOf(request),
          leaseId: request.params.leaseId,
          fingerprint: request.body.fingerprint,
        }),
      ),
  );
}
