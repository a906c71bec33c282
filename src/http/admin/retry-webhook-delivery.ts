import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { adminMay } from '../access/access.js';

const Params = Type.Object({
  deliveryId: Type.String({ pattern: '^[1-9][0-9]{0,14}$', description: 'a delivery id' }),
});

/** `keyward webhooks retry`: one delivery due now, a failed one too; audited. */
export function retryWebhookDeliveryRoute(app: App): void {
  app.post(
    '/webhooks/deliveries/:deliveryId/retry',
    { config: { access: adminMay('retry') }, schema: { params: Params } },
    async (request) =>
      app.services.webhookAdmin.retry(Number(request.params.deliveryId), operatorRequestOf(request)),
  );
}
