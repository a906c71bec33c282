import { Type } from 'typebox';
import type { App } from '../app-type.js';
import { memberActor } from '../audit-actor.js';
import { ok } from '../envelope.js';
import { memberOf } from '../guards/principal.js';
import { Envelope, NonceQuery } from '../schema-types.js';
import { adminOnly, MemberParams } from './member-schemas.js';
import { ACCESS } from '../access/access.js';

/** Member op 4: delete an employee (softly), releasing its assets and revoking its tokens. */
export function deleteMemberRoute(app: App): void {
  // The operation has no body. Clients that send `Content-Type: application/json` on every call
  // would otherwise be refused for the empty body they did not mean to send, so it is ignored.
  void app.register(async (scope: App) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string' }, (_request, _body, done) => done(null, undefined));
    scope.delete(
      '/enterprise/:enterpriseGlobalId/member/:memberGlobalId',
      {
        config: { access: ACCESS.member },
        preValidation: adminOnly,
        schema: {
          operationId: 'deleteMember',
          summary:
            'Remove an employee; their assets return to the enterprise (delete an employee, member op 4)',
          params: MemberParams,
          querystring: Type.Object(NonceQuery),
          response: { 200: Envelope(Type.Null()) },
        },
      },
      async (request) => {
        await app.services.members.delete(
          memberOf(request).enterpriseId,
          request.params.memberGlobalId,
          memberActor(request),
        );
        return ok(null);
      },
    );
  });
}
