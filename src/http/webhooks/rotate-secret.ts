import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appActor } from '../audit-actor.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { EndpointParams, EndpointWithSecret, RotateSecretBody } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: a new signing secret, answered once; the previous one also signs for the overlap. */
export function rotateSecretRoute(app: App): void {
  app.post(
    '/endpoints/:endpointId/rotate-secret',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: "Rotate a webhook endpoint's signing secret (answers the new one, once)",
        params: EndpointParams,
        querystring: Type.Object(NonceQuery),
        body: RotateSecretBody,
        response: { 200: Envelope(EndpointWithSecret) },
      },
    },
    async (request) =>
      ok(
        await app.services.webhookEndpoints.rotateSecret(
          appOf(request).appId,
          request.params.endpointId,
          request.body.overlapSeconds,
          appActor(request),
        ),
      ),
  );
}
