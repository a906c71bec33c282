import type { FastifyReply, FastifyRequest } from 'fastify';
import { CommonCode } from '../../errors/common-codes.js';
import type { Services } from '../../services.js';
import { bearerOf, deny, nonceOf, refuseMalformedNonce, requireAdmission, requireGrant } from './common.js';

/** onRequest guard of the webhooks API: app token with `auth_webhooks`, then the nonce. */
export function webhooksGuard(services: Services) {
  return async function guardWebhooks(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const token = bearerOf(request);
    if (token === undefined) throw deny(CommonCode.appTokenInvalid, 'Authorization Bearer token missing');
    const nonce = nonceOf(request);
    if (nonce === undefined) return refuseMalformedNonce(services, token, 'auth_webhooks');
    const facts = await services.gate.check({ appToken: token, scope: 'auth_webhooks', nonce });
    const grant = requireGrant(facts.app, 'auth_webhooks');
    requireAdmission(facts.admission);
    request.appPrincipal = { appId: grant.appId, appKey: grant.appKey, channels: grant.channels };
  };
}
