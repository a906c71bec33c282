import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MemberPrincipal } from './principal.js';
import { CommonCode } from '../../errors/common-codes.js';
import type { Services } from '../../services.js';
import {
  bearerOf,
  deny,
  headerOf,
  nonceOf,
  refuseMalformedNonce,
  requireAdmission,
  requireGrant,
} from './common.js';

/**
 * onRequest guard of the license runtime: app token with `auth_runtime`, then the nonce, as the
 * order service; a `userToken`, when sent, must be live and issued to the same app (the member is
 * then the lease's holder).
 */
export function runtimeGuard(services: Services) {
  return async function guardRuntime(
    request: FastifyRequest,
    _reply: FastifyReply,
    access: { replayable?: true },
  ): Promise<void> {
    const token = bearerOf(request);
    if (token === undefined) throw deny(CommonCode.appTokenInvalid, 'Authorization Bearer token missing');
    const nonce = nonceOf(request);
    const sent = (request.query as Record<string, unknown> | undefined)?.g_nonce !== undefined;
    if (nonce === undefined && (sent || access.replayable !== true))
      return refuseMalformedNonce(services, token, 'auth_runtime');
    const userToken = headerOf(request, 'usertoken');
    const facts = await services.gate.check({
      appToken: token,
      scope: 'auth_runtime',
      // Not recorded where a replay is harmless, even when sent.
      nonce: access.replayable === true ? null : (nonce ?? null),
      ...(userToken === undefined ? {} : { userToken }),
    });
    const grant = requireGrant(facts.app, 'auth_runtime');
    requireAdmission(facts.admission);
    if (userToken !== undefined) {
      const user = facts.user;
      if (!user) throw deny(CommonCode.userTokenInvalid, 'userToken unknown, expired or revoked');
      if (user.appId !== grant.appId) {
        throw deny(CommonCode.securityCheckFailed, 'userToken was issued to another application');
      }
      request.memberPrincipal = user;
    }
    request.appPrincipal = { appId: grant.appId, appKey: grant.appKey, channels: grant.channels };
  };
}

/**
 * The member a runtime call acts for, where the operation needs one (an activation by a
 * connected machine): 60005 when the call sent no user token.
 */
export function runtimeMember(request: FastifyRequest): MemberPrincipal {
  const member = request.memberPrincipal;
  if (member === undefined) {
    throw deny(
      CommonCode.userTokenInvalid,
      'userToken missing: a member of the lock’s enterprise makes an activation',
    );
  }
  return member;
}
