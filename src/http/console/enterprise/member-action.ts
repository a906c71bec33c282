import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app-type.js';
import { sendErrorPage } from '../error-page.js';
import { enterpriseContext } from '../context.js';
import { redirectTo } from '../render.js';
import type { ConsoleError } from '../ui.js';
import type { Done } from './forms.js';
import { memberPath } from './forms.js';
import { formText } from '../form-fields.js';
import { consoleErrorOf, NOT_YOURS, type MemberField } from './member-errors.js';
import { findMember, sendMemberPage } from './member-page.js';

/** Pages an action posted from elsewhere may go back to (`next=`); nothing else is followed. */
const BACK: Record<string, string> = {
  assets: '/console/enterprise/assets',
  'lent-locks': '/console/enterprise/lent-locks',
};

export type MemberParams = { Params: { memberGlobalId: string } };

/**
 * One POST on an employee: found in this enterprise first (else 404), then the service's change.
 * Success goes back to `next` (post/redirect/get); a refusal re-renders the employee's page with
 * the code and sentence next to the field. `check` refuses input before the service is asked.
 */
export async function memberAction(
  app: App,
  request: FastifyRequest<MemberParams>,
  reply: FastifyReply,
  action: {
    done: Done;
    run: (enterpriseId: number, memberGlobalId: string) => Promise<void>;
    field?: MemberField;
    check?: () => ConsoleError | undefined;
    next?: string;
  },
) {
  const { memberGlobalId } = request.params;
  const context = enterpriseContext(request);
  if ((await findMember(app, request, memberGlobalId)) === undefined) {
    return sendErrorPage(request, reply, 404, 'error.notFound');
  }
  const refused = action.check?.();
  if (refused !== undefined)
    return sendMemberPage(app, request, reply, memberGlobalId, { error: refused, status: 422 });
  try {
    await action.run(context.session.member.enterpriseId, memberGlobalId);
  } catch (error) {
    const shown = consoleErrorOf(context.t, error, action.field);
    if (shown === undefined) throw error;
    if (shown.code !== undefined && NOT_YOURS.has(shown.code)) {
      return sendErrorPage(request, reply, 404, 'error.notFound');
    }
    return sendMemberPage(app, request, reply, memberGlobalId, { error: shown, status: 422 });
  }
  const next = action.next ?? BACK[formText(request, 'next')] ?? memberPath(memberGlobalId);
  return redirectTo(reply, `${next}${next.includes('?') ? '&' : '?'}done=${action.done}`);
}
