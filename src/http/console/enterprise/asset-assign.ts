import type { FastifyRequest } from 'fastify';
import { MemberCode } from '../../../errors/member-codes.js';
import type { App } from '../../app-type.js';
import { enterpriseContext } from '../context.js';
import { redirectTo } from '../render.js';
import { sendAssetsPage } from './assets.js';
import { actorOf } from './forms.js';
import { formText } from '../form-fields.js';
import { consoleErrorOf } from './member-errors.js';
import { ACCESS } from '../../access/access.js';

/**
 * The employee an administrator names by account: the full account (`alice@code`) or its name
 * before the `@`. Found with member op 5's search, so no second way to members exists.
 */
async function memberByAccount(
  app: App,
  request: FastifyRequest,
  given: string,
): Promise<string | undefined> {
  const wanted = given.toLowerCase();
  if (wanted === '') return undefined;
  const page = await app.services.members.list(enterpriseContext(request).session.member.enterpriseId, {
    keyword: wanted,
    pageSize: 50,
  });
  const match = page.list.find((m) => {
    const account = m.userName.toLowerCase();
    return account === wanted || account.split('@')[0] === wanted;
  });
  return match?.globalId;
}

/** POST /console/enterprise/assets/assign: member op 9, one asset number to the named employee. */
export function assetAssignRoute(app: App): void {
  app.post(
    '/enterprise/assets/assign',
    { config: { access: ACCESS.enterpriseSession } },
    async (request, reply) => {
      const context = enterpriseContext(request);
      const values = {
        assetNum: formText(request, 'assetNum').trim(),
        account: formText(request, 'account').trim(),
      };
      const memberGlobalId = await memberByAccount(app, request, values.account);
      if (memberGlobalId === undefined) {
        const error = {
          code: MemberCode.memberNotMatched,
          message: context.t('code.60026'),
          field: 'account',
        };
        return sendAssetsPage(app, request, reply, 1, { error, values, status: 422 });
      }
      try {
        await app.services.memberAssets.configurePrivileges(
          context.session.member.enterpriseId,
          memberGlobalId,
          { addAssets: [values.assetNum] },
          actorOf(request),
        );
      } catch (error) {
        const shown = consoleErrorOf(context.t, error);
        if (shown === undefined) throw error;
        return sendAssetsPage(app, request, reply, 1, { error: shown, values, status: 422 });
      }
      return redirectTo(reply, '/console/enterprise/assets?done=assigned');
    },
  );
}
