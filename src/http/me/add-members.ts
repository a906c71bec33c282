import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery, Nullable } from '../schema-types.js';
import { AddedMember, adminOnly, EnterpriseParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

// Only the shape is checked here: each user's fields are judged by the service, so one bad user
// lands in `failed` instead of rejecting the whole batch.
const Body = Type.Object({
  userList: Type.Optional(Nullable(Type.Array(Type.Record(Type.String(), Type.Unknown())))),
});

const Result = Type.Object({
  succeeded: Type.Array(AddedMember),
  failed: Type.Array(Type.Object({ userName: Type.String(), message: Type.String() })),
});

/** Member op 1: add employees in batch (at most 100). */
export function addMembersRoute(app: App): void {
  app.post(
    '/enterprise/:enterpriseGlobalId/member',
    {
      config: { access: ACCESS.member },
      preValidation: adminOnly,
      schema: {
        operationId: 'addMembers',
        summary:
          'Add employees to the enterprise, each with an account and a password (add employees, member op 1)',
        params: EnterpriseParams,
        querystring: Type.Object(NonceQuery),
        body: Body,
        response: { 200: Envelope(Result) },
      },
    },
    async (request) =>
      ok(
        await app.services.members.add(
          memberOf(request).enterpriseId,
          request.body.userList ?? undefined,
          memberActor(request),
        ),
      ),
  );
}
