import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../domain/shared/secrets.js';
import type { Services } from '../../services.js';
import type { Check } from '../access/enforce.js';
import { bearerOf } from './common.js';

/**
 * Wrong admin keys one address may present in a minute, over the admin API and the operator's
 * console sign-in together: past it every try is refused unread until the next minute, so the key
 * cannot be guessed at the speed of the network.
 */
export const ADMIN_KEY_FAILURES_PER_MINUTE = 20;

const failuresKey = (request: FastifyRequest) => `admin-key-failures:${request.ip}`;

export type AdminKeyVerdict =
  { status: 'ok' } | { status: 'wrong' } | { status: 'limited'; retryAfterSeconds: number };

/** Checks a presented admin key against the address's budget of failures; a failure is counted. */
export async function judgeAdminKey(
  services: Services,
  request: FastifyRequest,
  given: unknown,
  adminKey: string,
): Promise<AdminKeyVerdict> {
  const [failures = 0] = await services.gate.peekCounts([failuresKey(request)]);
  if (failures >= ADMIN_KEY_FAILURES_PER_MINUTE) {
    return { status: 'limited', retryAfterSeconds: 60 - Math.floor((Date.now() % 60_000) / 1000) };
  }
  if (typeof given !== 'string' || given === '') return { status: 'wrong' };
  if (safeEqual(given, adminKey)) return { status: 'ok' };
  // Only a key presented counts: a call that sends none guesses nothing.
  await services.gate.countRequests([failuresKey(request)]);
  return { status: 'wrong' };
}

/** The admin API: the admin key as a bearer token. */
export function adminKeyGuard(services: Services, adminKey: string): Check<'admin-key'> {
  return async function guardAdminKey(request: FastifyRequest, reply: FastifyReply) {
    const given = bearerOf(request);
    const verdict = await judgeAdminKey(services, request, given, adminKey);
    switch (verdict.status) {
      case 'ok':
        return undefined;
      case 'wrong':
        // Which of the two: a caller who sent none has a setup to fix, not a key to check.
        return reply.code(401).send({
          error:
            given === undefined
              ? 'admin key missing: send it as Authorization: Bearer <admin key>'
              : 'admin key wrong',
        });
      case 'limited':
        return reply
          .code(429)
          .header('retry-after', String(verdict.retryAfterSeconds))
          .send({
            error: `too many wrong admin keys from this address; retry in ${verdict.retryAfterSeconds} s`,
          });
    }
  };
}
