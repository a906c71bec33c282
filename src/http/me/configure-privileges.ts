import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { AssetNums, MemberOnlyParams } from './member-asset-schemas.js';
import { adminOnly } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

const Body = Type.Object({
  deleteAssets: Type.Optional(AssetNums('asset numbers to take from the member')),
  addAssets: Type.Optional(AssetNums('asset numbers to assign to the member')),
});

/** Member op 9: revoke and assign asset numbers of an employee, all or nothing. */
export function configurePrivilegesRoute(app: App): void {
  app.post(
    '/enterprise/member/:memberGlobalId/privileges',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'configurePrivileges',
        summary:
          'Assign assets to an employee or take them back (configure assets of an employee, member op 9)',
        params: MemberOnlyParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Null()) },
      },
    },
    async (request) => {
      await app.services.memberAssets.configurePrivileges(
        memberOf(request).enterpriseId,
        request.params.memberGlobalId,
        request.body,
        memberActor(request),
      );
      return ok(null);
    },
  );
}
