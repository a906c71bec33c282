import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../domain/shared/secrets.js';
import type { Check } from '../access/enforce.js';
import { bearerOf } from './common.js';

/** /metrics: the metrics token when one is set (METRICS_TOKEN); else anyone who reaches its listener. */
export function metricsGuard(token: string | undefined): Check<'metrics'> {
  return async function guardMetrics(request: FastifyRequest, reply: FastifyReply) {
    if (token === undefined) return undefined;
    const given = bearerOf(request);
    if (given !== undefined && safeEqual(given, token)) return undefined;
    return reply
      .code(401)
      .header('www-authenticate', 'Bearer')
      .send({ error: 'metrics token missing or wrong' });
  };
}
