import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { Endpoint } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: the calling app's endpoints (at most 20), oldest first. */
export function listEndpointsRoute(app: App): void {
  app.get(
    '/endpoints',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: "List the app's webhook endpoints",
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(Type.Array(Endpoint)) },
      },
    },
    async (request) => ok(await app.services.webhookEndpoints.list(appOf(request).appId)),
  );
}
