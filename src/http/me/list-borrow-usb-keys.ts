import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { LentLockItem } from './member-asset-schemas.js';
import { adminOnly, EnterpriseParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

/** Member op 8: the enterprise's lent locks and to whom each is lent. */
export function listBorrowUsbKeysRoute(app: App): void {
  app.get(
    '/enterprise/:enterpriseGlobalId/asset/borrowUsbKeys',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'listBorrowUsbKeys',
        summary:
          'List the USB locks employees lend onto, and who carries each (list lent locks, member op 8)',
        params: EnterpriseParams,
        querystring: Type.Object(NonceQuery),
        response: { 200: Envelope(Type.Array(LentLockItem)) },
      },
    },
    async (request) => ok(await app.services.memberAssets.listLentLocks(memberOf(request).enterpriseId)),
  );
}
