import { CommonCode } from '../../errors/common-codes.js';
import type { Services } from '../../services.js';
import type { Check } from '../access/enforce.js';
import { bearerOf, deny, nonceOf, refuseMalformedNonce, requireAdmission, requireGrant } from './common.js';

/**
 * An app acting alone (the order service, the webhooks API): an app token holding the route's
 * scope, then the nonce.
 */
export function appGuard(services: Services): Check<'app'> {
  return async function guardApp(request, _reply, access) {
    const { scope } = access;
    const token = bearerOf(request);
    if (token === undefined) throw deny(CommonCode.appTokenInvalid, 'Authorization Bearer token missing');
    const nonce = nonceOf(request);
    if (nonce === undefined) return refuseMalformedNonce(services, token, scope);
    const facts = await services.gate.check({ appToken: token, scope, nonce });
    const grant = requireGrant(facts.app, scope);
    requireAdmission(facts.admission);
    request.appPrincipal = { appId: grant.appId, appKey: grant.appKey, channels: grant.channels };
  };
}
