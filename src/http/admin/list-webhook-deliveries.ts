import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { DELIVERY_STATUSES } from '../../domain/webhooks/webhook-admin.repository.js';
import { IntLike, StringEnum } from '../schema-types.js';
import { EndpointId } from './webhook-schemas.js';
import { adminMay } from '../access/access.js';

const Query = Type.Object({
  endpoint: Type.Optional(EndpointId),
  status: Type.Optional(StringEnum(DELIVERY_STATUSES)),
  limit: Type.Optional(IntLike({ minimum: 1, maximum: 1000 })),
  // A delivery id (the page's last): the next page of older deliveries.
  before: Type.Optional(IntLike({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
});

/** `keyward webhooks deliveries`: the newest deliveries, each with its attempts and the last one's outcome. */
export function listWebhookDeliveriesRoute(app: App): void {
  app.get(
    '/webhooks/deliveries',
    { config: { access: adminMay('read') }, schema: { querystring: Query } },
    async (request) => {
      const q = request.query;
      const rows = await app.services.webhookAdmin.listDeliveries({
        ...(q.endpoint === undefined ? {} : { endpointId: q.endpoint }),
        ...(q.status === undefined ? {} : { status: q.status }),
        ...(q.before === undefined ? {} : { before: q.before }),
        limit: q.limit ?? 50,
      });
      // Times answer as ISO 8601 strings (Date's JSON), as in the webhooks API.
      return rows;
    },
  );
}
