import type { FastifyReply, FastifyRequest } from 'fastify';
import { CONSOLE_OPERATOR } from '../../domain/console/console-client.js';
import { mayAct } from '../../domain/operators/roles.js';
import type { Services } from '../../services.js';
import type { Checks } from '../access/enforce.js';
import { sendErrorPage } from './error-page.js';
import { redirectTo } from './render.js';
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
      // Operator sessions are opened with the admin key, which holds every role; a named
      // operator's session will carry the operator's roles, checked against the page's permission.
      const principal = {
        operatorId: null,
        name: CONSOLE_OPERATOR,
        roles: ['owner' as const],
        tokenId: null,
      };
      if (!mayAct(principal.roles, access.permission))
        return sendErrorPage(request, reply, 404, 'error.notFound');
      request.operatorPrincipal = principal;
      return undefined;
    },
  };
}
