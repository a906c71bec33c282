import type { FastifyReply, FastifyRequest } from 'fastify';
import { CommonCode } from '../../errors/common-codes.js';
import type { Services } from '../../services.js';
import { bearerOf, deny, nonceOf, refuseMalformedNonce, requireAdmission, requireGrant } from './common.js';
import type { AppPrincipal } from './principal.js';

/** onRequest guard of the order service: app token with `auth_order`, then the nonce. */
export function orderGuard(services: Services) {
  return async function guardOrder(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const token = bearerOf(request);
    if (token === undefined) throw deny(CommonCode.appTokenInvalid, 'Authorization Bearer token missing');
    const nonce = nonceOf(request);
    if (nonce === undefined) return refuseMalformedNonce(services, token, 'auth_order');
    const facts = await services.gate.check({ appToken: token, scope: 'auth_order', nonce });
    const grant = requireGrant(facts.app, 'auth_order');
    requireAdmission(facts.admission);
    request.appPrincipal = { appId: grant.appId, appKey: grant.appKey, channels: grant.channels };
  };
}

/** A channel outside the app's channels is refused like a bad token (DOMAIN.md §2). */
export function requireChannel(app: AppPrincipal, channelCode: string): void {
  if (!app.channels.includes(channelCode)) {
    throw deny(CommonCode.appTokenInvalid, `channelCode ${channelCode} is not allowed for this application`);
  }
}
