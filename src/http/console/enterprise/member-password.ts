import type { App } from '../../app-type.js';
import { actorOf } from './forms.js';
import { formText } from '../form-fields.js';
import { memberAction, type MemberParams } from './member-action.js';
import { ACCESS } from '../../access/access.js';

/** POST /console/enterprise/members/:id/password: member op 3; the employee's tokens end with it. */
export function resetPasswordRoute(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/password',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) =>
      memberAction(app, request, reply, {
        done: 'password',
        run: (enterpriseId, memberGlobalId) =>
          app.services.members.resetPassword(
            enterpriseId,
            memberGlobalId,
            formText(request, 'password'),
            actorOf(request),
          ),
      }),
  );
}
