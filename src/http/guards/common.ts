import type { Scope } from '../../domain/apps/apps.service.js';
import type { FastifyRequest } from 'fastify';
import { CommonCode, commonMessages } from '../../errors/common-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { NONCE_PATTERN, secondsToNextWindow, type Admission } from '../../domain/gate/gate.js';
import type { TokenGrant } from '../../domain/tokens/tokens.repository.js';
import type { Services } from '../../services.js';

export function deny(
  code:
    | typeof CommonCode.appTokenInvalid
    | typeof CommonCode.userTokenInvalid
    | typeof CommonCode.securityCheckFailed,
  cause: string,
): KeywardError {
  return new KeywardError(code, commonMessages[code], { cause });
}

export function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

export function headerOf(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

/** The call's g_nonce when it is well-formed. */
export function nonceOf(request: FastifyRequest): string | undefined {
  const nonce = (request.query as Record<string, unknown> | undefined)?.g_nonce;
  return typeof nonce === 'string' && NONCE_PATTERN.test(nonce) ? nonce : undefined;
}

/**
 * 60000 unless the app token is live and holds the surface's scope: issued with it, and its app
 * still holding it (TokenGrant.scopes).
 */
export function requireGrant(grant: TokenGrant | undefined, scope: Scope): TokenGrant {
  if (!grant) throw deny(CommonCode.appTokenInvalid, 'app token unknown, expired or revoked');
  if (!grant.scopes.includes(scope)) throw deny(CommonCode.appTokenInvalid, `app token lacks scope ${scope}`);
  return grant;
}

/** Rate limit, then the nonce: a replayed nonce is a failed security check. */
export function requireAdmission(admission: Admission | undefined): void {
  if (admission === 'limited') {
    throw new KeywardError(CommonCode.rateLimited, commonMessages[CommonCode.rateLimited], {
      httpStatus: 429,
      cause: 'per-app rate limit reached; retry in the next minute',
      retryAfterSeconds: secondsToNextWindow(),
    });
  }
  if (admission !== 'ok') throw deny(CommonCode.securityCheckFailed, 'g_nonce was already used');
}

/**
 * A missing or malformed nonce records nothing, but the app token is still judged first (60000
 * before 70001), so this path looks the token up on its own.
 */
export async function refuseMalformedNonce(
  services: Services,
  appToken: string,
  scope: Scope,
): Promise<never> {
  requireGrant(await services.tokens.resolveAppToken(appToken), scope);
  throw deny(CommonCode.securityCheckFailed, 'g_nonce must be 8–64 of A-Za-z0-9_-');
}
