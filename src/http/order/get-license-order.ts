import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery, Nullable, StringEnum } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

const LicenseOrderStatus = Type.Object({
  licenseOrderId: Type.String(),
  channelOrderId: Type.String(),
  sequence: Type.Integer(),
  status: StringEnum(['pending', 'completed', 'failed'] as const),
  reason: Nullable(Type.String()),
});

/** An addition (DOMAIN.md §5): where an order of op 5 stands, above all an async one. */
export function getLicenseOrderRoute(app: App): void {
  app.get(
    '/licenseOrder/:licenseOrderId',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'getLicenseOrder',
        summary:
          "See how a license order went: pending, completed or failed (license order status, Keyward's addition to order op 5)",
        params: Type.Object({ licenseOrderId: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(LicenseOrderStatus) },
      },
    },
    async (request) =>
      ok(await app.services.orders.status(appOf(request).appId, request.params.licenseOrderId)),
  );
}
