import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, IntLike, NonceQuery, Nullable } from '../schema-types.js';
import { adminOnly, MemberParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

// Lengths and formats are the service's, so they answer their own codes (30002, 30003, 10004).
const Body = Type.Object({
  userName: Type.Optional(Type.String({ description: 'cannot be changed; may be echoed' })),
  departmentId: Type.Optional(IntLike({ minimum: 0 })),
  name: Type.Optional(Type.String()),
  remark: Type.Optional(Nullable(Type.String())),
  passwordMobile: Type.Optional(Nullable(Type.String())),
});

/** Member op 2: change an employee's name, department, remark and security mobile. */
export function editMemberRoute(app: App): void {
  app.put(
    '/enterprise/:enterpriseGlobalId/member/:memberGlobalId',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'editMember',
        summary:
          "Change an employee's name, department, remark or mobile number (edit an employee, member op 2)",
        params: MemberParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Type.Null()) },
      },
    },
    async (request) => {
      await app.services.members.edit(
        memberOf(request).enterpriseId,
        request.params.memberGlobalId,
        request.body,
        memberActor(request),
      );
      return ok(null);
    },
  );
}
