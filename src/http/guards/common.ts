import type { FastifyRequest } from 'fastify';
import { CommonCode, commonMessages } from '../../errors/common-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { NONCE_PATTERN } from '../../domain/gate/gate.js';
import type { RequestGate } from '../../domain/gate/gate.js';

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

/** Rate limit, then the nonce: a replayed or malformed nonce is a failed security check. */
export async function admitNonce(request: FastifyRequest, gate: RequestGate, appId: string): Promise<void> {
  const nonce = (request.query as Record<string, unknown> | undefined)?.g_nonce;
  if (typeof nonce !== 'string' || !NONCE_PATTERN.test(nonce)) {
    throw deny(CommonCode.securityCheckFailed, 'g_nonce must be 8–64 of A-Za-z0-9_-');
  }
  const admission = await gate.admit(appId, nonce);
  if (admission === 'limited') {
    throw new KeywardError(CommonCode.rateLimited, commonMessages[CommonCode.rateLimited], {
      httpStatus: 429,
      cause: 'per-app rate limit reached; retry in the next minute',
    });
  }
  if (admission === 'replayed') {
    throw deny(CommonCode.securityCheckFailed, 'g_nonce was already used');
  }
}
