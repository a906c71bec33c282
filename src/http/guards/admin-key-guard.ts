import type { FastifyReply, FastifyRequest } from 'fastify';
import { ADMIN_OPERATOR } from '../../domain/audit/audit-actions.js';
import { loginAddress } from '../../domain/members/login-source.js';
import { OPERATOR_TOKEN_PREFIX } from '../../domain/operators/operators.service.js';
import { mayAct } from '../../domain/operators/roles.js';
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

/** Counted per address, an IPv6 /64 as one: walking one's own addresses buys no fresh budget. */
const failuresKey = (request: FastifyRequest) => `admin-key-failures:${loginAddress(request.ip)}`;

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

/** The admin key as the audit log names it: no person, the surface it came through. */
const KEY_PRINCIPAL = { operatorId: null, name: ADMIN_OPERATOR, roles: ['owner'], tokenId: null } as const;

const refuse = (reply: FastifyReply, status: number, error: string) => reply.code(status).send({ error });

/**
 * The admin API: an operator's personal token (`kwp_…`) whose roles hold the route's permission,
 * or the admin key (every permission) unless ADMIN_KEY_ENABLED=0 turned it off. A token nobody
 * holds counts against the address's budget of wrong keys, as a wrong key does.
 */
export function adminGuard(services: Services, adminKey: string, keyEnabled: boolean): Check<'admin'> {
  return async function guardAdmin(request: FastifyRequest, reply: FastifyReply, access) {
    const given = bearerOf(request);
    if (given?.startsWith(OPERATOR_TOKEN_PREFIX) === true) {
      const [failures = 0] = await services.gate.peekCounts([failuresKey(request)]);
      if (failures >= ADMIN_KEY_FAILURES_PER_MINUTE) return limited(reply);
      const verdict = await services.operators.authenticate(given);
      switch (verdict.status) {
        case 'unknown':
          await services.gate.countRequests([failuresKey(request)]);
          return refuse(reply, 401, 'token wrong: no such personal token');
        case 'revoked':
        case 'expired':
          return refuse(
            reply,
            401,
            `token ${verdict.status}: create a new one (keyward operator token create)`,
          );
        case 'disabled':
          return refuse(reply, 401, 'token refused: its operator is disabled');
        case 'ok':
          if (!mayAct(verdict.roles, access.permission)) {
            return refuse(
              reply,
              403,
              `not allowed: this needs the ${access.permission} permission, which role ${verdict.roles.join(' and ')} lacks`,
            );
          }
          request.operatorPrincipal = {
            operatorId: verdict.operatorId,
            name: verdict.operatorName,
            roles: verdict.roles,
            tokenId: verdict.tokenId,
          };
          return undefined;
      }
    }
    if (!keyEnabled) {
      return refuse(
        reply,
        401,
        'admin key turned off (ADMIN_KEY_ENABLED=0): use a personal token (keyward login)',
      );
    }
    const verdict = await judgeAdminKey(services, request, given, adminKey);
    switch (verdict.status) {
      case 'ok':
        request.operatorPrincipal = { ...KEY_PRINCIPAL, roles: [...KEY_PRINCIPAL.roles] };
        return undefined;
      case 'wrong':
        // Which of the two: a caller who sent none has a setup to fix, not a key to check.
        return refuse(
          reply,
          401,
          given === undefined
            ? 'admin key missing: send it as Authorization: Bearer <admin key>'
            : 'admin key wrong',
        );
      case 'limited':
        return limited(reply, verdict.retryAfterSeconds);
    }
  };
}

function limited(reply: FastifyReply, retryAfterSeconds = 60 - Math.floor((Date.now() % 60_000) / 1000)) {
  return reply
    .code(429)
    .header('retry-after', String(retryAfterSeconds))
    .send({
      error: `too many wrong admin keys or tokens from this address; retry in ${retryAfterSeconds} s`,
    });
}
