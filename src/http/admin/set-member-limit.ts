import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { operatorRequestOf } from '../audit-actor.js';
import { IntLike, Nullable } from '../schema-types.js';
import { AdminNotFoundError } from './index.js';
import { adminMay } from '../access/access.js';

const Params = Type.Object({ enterpriseGlobalId: Type.String({ minLength: 1, maxLength: 100 }) });
const Body = Type.Object({
  memberLimit: Nullable(IntLike({ minimum: 1, maximum: 1_000_000 })),
});

const Result = Type.Object({
  enterpriseGlobalId: Type.String(),
  memberLimit: Nullable(Type.Integer()),
  memberCount: Type.Integer(),
});

/** `keyward enterprise set-member-limit ID N|none`: caps members, the administrator included. */
export function setMemberLimitRoute(app: App): void {
  app.post(
    '/enterprises/:enterpriseGlobalId/member-limit',
    {
      config: { access: adminMay('write') },
      schema: { params: Params, body: Body, response: { 200: Result } },
    },
    async (request) => {
      const view = await app.services.memberAdmin.setMemberLimit(
        request.params.enterpriseGlobalId,
        request.body.memberLimit,
        operatorRequestOf(request),
      );
      if (!view) throw new AdminNotFoundError(`no enterprise ${request.params.enterpriseGlobalId}`);
      return view;
    },
  );
}
