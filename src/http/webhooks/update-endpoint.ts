import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appActor } from '../audit-actor.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Endpoint, EndpointParams, UpdateEndpointBody } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: a new url or event filter, or an endpoint enabled again after failures. */
export function updateEndpointRoute(app: App): void {
  app.patch(
    '/endpoints/:endpointId',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: "Change a webhook endpoint's url or event types, or enable it again",
        params: EndpointParams,
        querystring: Type.Object(NonceQuery),
        body: UpdateEndpointBody,
        response: { 200: Envelope(Endpoint) },
      },
    },
    async (request) =>
      ok(
        await app.services.webhookEndpoints.update(
          appOf(request).appId,
          request.params.endpointId,
          request.body,
          appActor(request),
        ),
      ),
  );
}
