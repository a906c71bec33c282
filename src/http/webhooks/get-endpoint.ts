import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Endpoint, EndpointParams } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: one endpoint of the calling app; another app's is not found. */
export function getEndpointRoute(app: App): void {
  app.get(
    '/endpoints/:endpointId',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        params: EndpointParams,
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(Endpoint) },
      },
    },
    async (request) =>
      ok(await app.services.webhookEndpoints.get(appOf(request).appId, request.params.endpointId)),
  );
}
