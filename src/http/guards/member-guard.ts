import type { FastifyReply, FastifyRequest } from 'fastify';
import { CommonCode } from '../../errors/common-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { MemberCode, memberMessages } from '../../errors/member-codes.js';
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
import type { MemberPrincipal } from './principal.js';

/**
 * onRequest guard of the member center, in the order DOMAIN.md §2 fixes: app token and scope
 * (60000), nonce (70001), user token (60005), then the cross checks (70001).
 */
export function memberGuard(services: Services) {
  return async function guardMember(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const bearer = bearerOf(request);
    const clientToken = headerOf(request, 'clienttoken');
    const appToken = bearer ?? clientToken;
    if (appToken === undefined) throw deny(CommonCode.appTokenInvalid, 'app token missing');
    const nonce = nonceOf(request);
    if (nonce === undefined) return refuseMalformedNonce(services, appToken, 'auth_me');
    const userToken = headerOf(request, 'usertoken');
    const facts = await services.gate.check({
      appToken,
      scope: 'auth_me',
      nonce,
      ...(userToken === undefined ? {} : { userToken }),
    });
    const grant = requireGrant(facts.app, 'auth_me');
    requireAdmission(facts.admission);
    if (userToken === undefined) throw deny(CommonCode.userTokenInvalid, 'userToken missing');
    const user = facts.user;
    if (!user) throw deny(CommonCode.userTokenInvalid, 'userToken unknown, expired or revoked');

    if (bearer !== undefined && clientToken !== undefined && bearer !== clientToken) {
      throw deny(CommonCode.securityCheckFailed, 'clientToken and Authorization differ');
    }
    if (user.appId !== grant.appId) {
      throw deny(CommonCode.securityCheckFailed, 'userToken was issued to another application');
    }
    const params = request.params as Record<string, string | undefined>;
    const enterprise = params.enterpriseGlobalId;
    if (enterprise !== undefined && enterprise !== user.enterpriseGlobalId) {
      throw deny(CommonCode.securityCheckFailed, "the path's enterprise is not the user's");
    }
    request.appPrincipal = { appId: grant.appId, appKey: grant.appKey, channels: grant.channels };
    request.memberPrincipal = user;
  };
}

/** Only the enterprise's administrator manages it (DOMAIN.md §2). */
export function requireAdmin(member: MemberPrincipal): void {
  if (member.identity !== 'admin') {
    throw new KeywardError(MemberCode.permission, memberMessages[MemberCode.permission], {
      cause: 'only the enterprise administrator may do this',
    });
  }
}

/** The administrator, or the member acting on itself (reset password, lend). */
export function requireAdminOrSelf(member: MemberPrincipal, memberGlobalId: string): void {
  if (member.identity !== 'admin' && member.memberGlobalId !== memberGlobalId) requireAdmin(member);
}
