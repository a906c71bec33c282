import type { App } from '../../app-type.js';
import { actorOf } from './forms.js';
import { memberAction, type MemberParams } from './member-action.js';
import { ACCESS } from '../../access/access.js';

/** POST /console/enterprise/members/:id/delete: member op 4; its assets and lent lock go back. */
export function deleteMemberRoute(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/delete',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) =>
      memberAction(app, request, reply, {
        done: 'deleted',
        next: '/console/enterprise',
        run: (enterpriseId, memberGlobalId) =>
          app.services.members.delete(enterpriseId, memberGlobalId, actorOf(request)),
      }),
  );
}
