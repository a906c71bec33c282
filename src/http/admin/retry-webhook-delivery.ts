import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { requestIdsOf } from '../audit-actor.js';
import { ACCESS } from '../access/access.js';

const Params = Type.Object({
  deliveryId: Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'a delivery id' }),
});

/** `keyward webhooks retry`: one delivery due now, a failed one too; audited. */
export function retryWebhookDeliveryRoute(app: App): void {
  app.post(
    '/webhooks/deliveries/:deliveryId/retry',
    { config: { access: ACCESS.adminKey }, schema: { params: Params } },
    async (request) =>
      app.services.webhookAdmin.retry(Number(request.params.deliveryId), requestIdsOf(request)),
  );
}
