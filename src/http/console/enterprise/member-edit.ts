import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { actorOf } from './forms.js';
import { formText } from '../form-fields.js';
import { memberAction, type MemberParams } from './member-action.js';
import { ACCESS } from '../../access/access.js';

/** POST /console/enterprise/members/:id/edit: member op 2 (name, department, mobile, remark). */
export function editMemberRoute(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/edit',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const { t } = enterpriseContext(request);
      const department = formText(request, 'departmentId').trim();
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
              name: formText(request, 'name').trim(),
              ...(department === '' ? {} : { departmentId: Number(department) }),
              remark: formText(request, 'remark').trim(),
              passwordMobile: formText(request, 'passwordMobile').trim(),
            },
            actorOf(request),
          ),
      });
    },
  );
}
