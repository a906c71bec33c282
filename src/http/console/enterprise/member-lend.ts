import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { actorOf } from './forms.js';
import { formText, formValues } from '../form-fields.js';
import { memberAction, type MemberParams } from './member-action.js';
import { ACCESS } from '../../access/access.js';

/** POST /console/enterprise/members/:id/lend: member op 10, the chosen assets onto a lent lock. */
export function lendRoute(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/lend',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const { t } = enterpriseContext(request);
      const lock = formText(request, 'lock').trim();
      const assetIds = formValues(request, 'assetIds');
      return memberAction(app, request, reply, {
        done: 'lent',
        // The API's schema asks for a lock and at least one asset; the form says which is missing.
        check: () => {
          if (lock === '') return { code: MemberCode.paramEmpty, message: t('code.40000'), field: 'lock' };
          if (assetIds.length === 0) {
            return { code: MemberCode.paramEmpty, message: t('lent.chooseAssets'), field: 'assetIds' };
          }
          return undefined;
        },
        run: (enterpriseId, memberGlobalId) =>
          app.services.lending.borrow(
            enterpriseId,
            memberGlobalId,
            { borrowedUsbKey: lock, assetIDs: assetIds },
            actorOf(request),
          ),
      });
    },
  );
}

/**
 * POST /console/enterprise/members/:id/return: gives back everything the employee lent to the
 * lock; the lent-locks page posts here too (`next=lent-locks`).
 */
export function returnRoute(app: App): void {
  app.post<MemberParams>(
    '/enterprise/members/:memberGlobalId/return',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) =>
      memberAction(app, request, reply, {
        done: 'returned',
        field: 'lock',
        run: (enterpriseId, memberGlobalId) =>
          app.services.lending.giveBack(
            enterpriseId,
            memberGlobalId,
            formText(request, 'lock').trim(),
            actorOf(request),
          ),
      }),
  );
}
