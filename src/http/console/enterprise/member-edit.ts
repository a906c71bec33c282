import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { actorOf, field } from './forms.js';
import { memberAction, type MemberParams } from './member-action.js';

/** POST /console/enterprise/members/:id/edit: member op 2 (name, department, mobile, remark). */
export function editMemberRoute(app: App): void {
  app.post<MemberParams>('/enterprise/members/:memberGlobalId/edit', async (request, reply) => {
    const { t } = enterpriseContext(request);
    const department = field(request, 'departmentId').trim();
    return memberAction(app, request, reply, {
      done: 'edited',
      // The API takes a whole number here; the form's text must be one, or be left empty.
      check: () =>
        department === '' || /^[0-9]{1,15}$/.test(department)
          ? undefined
          : { code: MemberCode.groupIdEmpty, message: t('code.40009'), field: 'departmentId' },
      run: (enterpriseId, memberGlobalId) =>
        app.services.members.edit(
          enterpriseId,
          memberGlobalId,
          {
            name: field(request, 'name').trim(),
            ...(department === '' ? {} : { departmentId: Number(department) }),
            remark: field(request, 'remark').trim(),
            passwordMobile: field(request, 'passwordMobile').trim(),
          },
          actorOf(request),
        ),
    });
  });
}
