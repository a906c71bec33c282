import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { appOf } from '../guards/principal.js';
import { Envelope, NonceQuery, Nullable, StringEnum } from '../schema-types.js';
import { ACCESS } from '../access/access.js';

const AssetRecord = Type.Object({
  id: Type.String(),
  licenseType: Type.String(),
  assetNum: Type.String(),
  grantable: Type.Boolean(),
  customerId: Type.String(),
  keyShellNumber: Nullable(Type.String({ description: 'the digits of the asset number' })),
  keyChipType: Nullable(
    Type.Integer({ description: '1 generation-4 lock, 2 generation-5; null for cloud assets' }),
  ),
  locked: Type.Boolean(),
  freezing: Type.Boolean(),
  createTime: Type.Integer(),
  updateTime: Type.Integer(),
  limitStartTime: Nullable(Type.Integer()),
  limitEndTime: Nullable(Type.Integer()),
  assignStatus: Type.Object({
    id: Type.String(),
    assignStatus: StringEnum(['assigned', 'unassigned'] as const),
    assignMemberId: Nullable(Type.String()),
    createTime: Nullable(Type.String({ description: 'ISO 8601' })),
    updateTime: Type.Null(),
  }),
  assetLimits: Type.Null(),
  assetExtends: Type.Array(Type.Object({ extendCode: Type.String(), extendValue: Nullable(Type.String()) })),
  borrowedUsbKey: Type.Boolean(),
});

/** Order op 8: the assets behind an enterprise's enterprise-cloud-account authorizations. */
export function listEnterpriseAssetsRoute(app: App): void {
  app.get(
    '/asset/:enterpriseGlobalId/list',
    {
      config: { access: ACCESS.order },
      schema: {
        operationId: 'listEnterpriseAssets',
        summary:
          "List an enterprise's cloud assets and who holds each (query enterprise virtual assets, order op 8)",
        params: Type.Object({ enterpriseGlobalId: Type.String({ minLength: 1, maxLength: 128 }) }),
        querystring: Type.Object({
          ...NonceQuery,
          extendCode: Type.Optional(Type.String({ maxLength: 64 })),
        }),
        response: { 200: Envelope(Type.Array(AssetRecord)) },
      },
    },
    async (request) =>
      ok(
        await app.services.assets.listEnterpriseAssets(
          appOf(request),
          request.params.enterpriseGlobalId,
          request.query.extendCode,
        ),
      ),
  );
}
