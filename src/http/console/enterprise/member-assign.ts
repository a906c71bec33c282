import type { App } from '../../app-type.js';
import { actorOf } from './forms.js';
import { formText } from '../form-fields.js';
import { memberAction, type MemberParams } from './member-action.js';
import { ACCESS } from '../../access/access.js';

/** POST /console/enterprise/members/:id/assign and …/unassign: member op 9, one asset number. */
export function assignRoutes(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/assign',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) =>
      memberAction(app, request, reply, {
        done: 'assigned',
        field: 'assetNum',
        run: (enterpriseId, memberGlobalId) =>
          app.services.memberAssets.configurePrivileges(
            enterpriseId,
            memberGlobalId,
            { addAssets: [formText(request, 'assetNum').trim()] },
            actorOf(request),
          ),
      }),
  );
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/unassign',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) =>
      memberAction(app, request, reply, {
        done: 'unassigned',
        field: 'assetNum',
        run: (enterpriseId, memberGlobalId) =>
          app.services.memberAssets.configurePrivileges(
            enterpriseId,
            memberGlobalId,
            { deleteAssets: [formText(request, 'assetNum').trim()] },
            actorOf(request),
          ),
      }),
  );
}
