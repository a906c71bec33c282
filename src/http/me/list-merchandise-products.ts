import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { AssetProducts } from './member-asset-schemas.js';
import { adminOnly } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

const Params = Type.Object({ assetId: Type.String({ minLength: 1, maxLength: 128 }) });

/** Member op 7: the products and merchandise on an asset of the caller's enterprise. */
export function listMerchandiseProductsRoute(app: App): void {
  app.get(
    '/enterprise/asset/:assetId/merchandiseProducts',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'listMerchandiseProducts',
        summary:
          'List the products and packages on one asset, with their limits (list products under an asset, member op 7)',
        params: Params,
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(AssetProducts) },
      },
    },
    async (request) =>
      ok(
        await app.services.memberAssets.merchandiseProducts(
          memberOf(request).enterpriseId,
          request.params.assetId,
        ),
      ),
  );
}
