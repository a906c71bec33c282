import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { runtimeActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, OptionalNonceQuery } from '../schema-types.js';
import { FingerprintBody, HeartbeatAnswer, LeaseParams } from './runtime-schemas.js';
import { ACCESS } from '../access/access.js';

/** Runtime: keep a lease alive; a withdrawn license answers 90009 with the reason. */
export function heartbeatRoute(app: App): void {
  app.post(
    '/leases/:leaseId/heartbeat',
    {
      config: { access: ACCESS.runtimeReplayable },
      schema: {
        operationId: 'heartbeatLease',
        summary: 'Heartbeat a lease',
        params: LeaseParams,
        querystring: Type.Object(OptionalNonceQuery),
        body: FingerprintBody,
        response: { 200: Envelope(HeartbeatAnswer) },
      },
    },
    async (request) =>
      ok(
        await app.services.runtime.heartbeat({
          app: appOf(request),
          leaseId: request.params.leaseId,
          fingerprint: request.body.fingerprint,
          actor: runtimeActor(request),
        }),
      ),
  );
}
