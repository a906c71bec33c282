import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { adminOrSelf, MemberParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

// Optional in the schema so that a missing password answers its own code, 40001.
const Body = Type.Object({ password: Type.Optional(Type.String()) });

/** Member op 3: a new password, by the administrator or the member itself. */
export function resetPasswordRoute(app: App): void {
  app.put(
    '/enterprise/:enterpriseGlobalId/member/:memberGlobalId/resetPassword',
    {
      config: { access: ACCESS.member },
      preValidation: adminOrSelf,
      schema: {
        operationId: 'resetPassword',
        summary:
          "Set an employee's new password and end their sessions (reset an employee password, member op 3)",
        params: MemberParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Null()) },
      },
    },
    async (request) => {
      await app.services.members.resetPassword(
        memberOf(request).enterpriseId,
        request.params.memberGlobalId,
        request.body.password,
        memberActor(request),
      );
      return ok(null);
    },
  );
}
