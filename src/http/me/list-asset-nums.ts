import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { AssetNumItem } from './member-asset-schemas.js';
import { adminOnly, EnterpriseParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

/** Member op 6: every asset number of the enterprise, with its holder and lending. */
export function listAssetNumsRoute(app: App): void {
  app.get(
    '/enterprise/:enterpriseGlobalId/asset/assetNums',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'listAssetNums',
        summary:
          "List the enterprise's assets and whom each is assigned to (list enterprise asset numbers, member op 6)",
        params: EnterpriseParams,
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(Type.Array(AssetNumItem)) },
      },
    },
    async (request) => ok(await app.services.memberAssets.listAssetNums(memberOf(request).enterpriseId)),
  );
}
