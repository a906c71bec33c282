import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SignInStep } from '../../domain/console/console-sessions.service.js';
import { mayAct } from '../../domain/operators/roles.js';
import type { Services } from '../../services.js';
import type { Checks } from '../access/enforce.js';
import { sendErrorPage } from './error-page.js';
import { redirectTo } from './render.js';
import { contextOf } from './context.js';
import { loadConsoleContext } from './session.js';

type ConsoleChecks = Pick<
  Checks,
  | 'console-public'
  | 'console-shared'
  | 'operator-sign-in'
  | 'console-session'
  | 'enterprise-session'
  | 'operator-session'
>;

const OPERATOR_SIGN_IN = '/console/operator/sign-in';
const ENTERPRISE_SIGN_IN = '/console/sign-in';

/** Where a sign-in that owes a step is sent, whatever page it asked for. */
export const STEP_PAGES: Record<Exclude<SignInStep, 'ready'>, string> = {
  'second-factor': '/console/operator/sign-in/code',
  password: '/console/operator/account/password',
  enrol: '/console/operator/account/two-factor',
};

/**
 * The console's part of the access check. Without a session the browser is sent to sign in; with
 * a session of the other kind it gets 404, as for anything it may not see.
 */
export function consoleChecks(services: Services): ConsoleChecks {
  const load = (request: FastifyRequest, withSession = true) =>
    loadConsoleContext(services, request, { withSession });

  async function requireSession(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: 'operator' | 'enterprise',
  ): Promise<FastifyReply | undefined> {
    const { session } = await load(request);
    if (session === undefined) {
      return redirectTo(reply, `${kind === 'operator' ? OPERATOR_SIGN_IN : ENTERPRISE_SIGN_IN}?note=expired`);
    }
    if (session.kind !== kind) return sendErrorPage(request, reply, 404, 'error.notFound');
    return undefined;
  }

  return {
    'console-public': (request) => load(request),
    // The assets are the same for everyone: no session to look up.
    'console-shared': (request) => load(request, false),
    'operator-sign-in': (request) => load(request),
    'console-session': async (request, reply) => {
      const { session } = await load(request);
      if (session === undefined) return redirectTo(reply, `${ENTERPRISE_SIGN_IN}?note=expired`);
      return undefined;
    },
    'enterprise-session': (request, reply) => requireSession(request, reply, 'enterprise'),
    'operator-session': async (request, reply, access) => {
      const refused = await requireSession(request, reply, 'operator');
      if (refused !== undefined) return refused;
      const { session } = contextOf(request);
      if (session?.kind !== 'operator') return sendErrorPage(request, reply, 404, 'error.notFound');
      // A sign-in that still owes a step reaches that step's page and nothing else.
      if (session.step !== 'ready' && access.duringSignIn !== true) {
        return redirectTo(reply, STEP_PAGES[session.step]);
      }
      const { operator } = session;
      const principal = {
        operatorId: operator.id,
        name: operator.name,
        roles: [operator.role],
        tokenId: null,
      };
      // A page the role does not reach is answered as one that does not exist.
      if (!mayAct(principal.roles, access.permission))
        return sendErrorPage(request, reply, 404, 'error.notFound');
      request.operatorPrincipal = principal;
      return undefined;
    },
  };
}
