import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { IntLike } from '../schema-types.js';
import { adminMay } from '../access/access.js';

const Query = Type.Object({
  app: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'an appKey' })),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })),
});

/** `keyward webhooks endpoints`: every app's endpoints, oldest first; never a secret. */
export function listWebhookEndpointsRoute(app: App): void {
  app.get(
    '/webhooks/endpoints',
    { config: { access: adminMay('read') }, schema: { querystring: Query } },
    async (request) => {
      const q = request.query;
      const rows = await app.services.webhookAdmin.listEndpoints({
        ...(q.app === undefined ? {} : { appKey: q.app }),
        limit: q.limit ?? 100,
      });
      // Times answer as ISO 8601 strings (Date's JSON), as in the webhooks API.
      return rows;
    },
  );
}
