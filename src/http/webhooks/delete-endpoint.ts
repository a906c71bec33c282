import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { okNoData } from '../envelope.js';
import { appActor } from '../audit-actor.js';
import { appOf } from '../guards/principal.js';
import { EnvelopeNoData, NonceQuery } from '../schema-types.js';
import { EndpointParams } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: remove an endpoint, with its pending deliveries. */
export function deleteEndpointRoute(app: App): void {
  app.delete(
    '/endpoints/:endpointId',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint and its pending deliveries',
        params: EndpointParams,
        querystring: Type.Object(NonceQuery),
        response: { 200: EnvelopeNoData },
      },
    },
    async (request) => {
      await app.services.webhookEndpoints.delete(
        appOf(request).appId,
        request.params.endpointId,
        appActor(request),
      );
      return okNoData();
    },
  );
}
