import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { FingerprintBody, LeaseParams } from './runtime-schemas.js';
import { ACCESS } from '../access/access.js';

/** Runtime: give the seat back; again for a lease already checked in answers success. */
export function checkInRoute(app: App): void {
  app.post(
    '/leases/:leaseId/check-in',
    {
      config: { access: ACCESS.runtime },
      schema: {
        summary: 'Check a lease in, freeing its seat',
        params: LeaseParams,
        querystring: Type.Object(NonceQuery),
        body: FingerprintBody,
        response: { 200: Envelope(Type.Object({ usedSeconds: Type.Integer() })) },
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
