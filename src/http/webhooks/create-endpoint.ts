import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appActor } from '../audit-actor.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { CreateEndpointBody, EndpointWithSecret } from './webhooks-schemas.js';
import { ACCESS } from '../access/access.js';

/** Webhooks: register an endpoint; its secret is answered now and never again. */
export function createEndpointRoute(app: App): void {
  app.post(
    '/endpoints',
    {
      config: { access: ACCESS.webhooks },
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Register a webhook endpoint (answers its signing secret, once)',
        querystring: Type.Object(NonceQuery),
        body: CreateEndpointBody,
        response: { 200: Envelope(EndpointWithSecret) },
      },
    },
    async (request) =>
      ok(await app.services.webhookEndpoints.create(appOf(request).appId, request.body, appActor(request))),
  );
}
