import type { FastifyRequest } from 'fastify';
import type { OperatorRequest } from '../../../domain/audit/audit-actions.js';
import { requestIdsOf } from '../../audit-actor.js';
import { operatorContext } from '../context.js';

/**
 * A change made in the console's operator area: audited naming the operator signed in (the
 * console's name when the admin key opened the session), with the request's ids. Only an
 * operator's session makes one (operatorContext refuses anything else), so no operator action can
 * run for a request the operator gate did not admit.
 */
export function consoleRequest(request: FastifyRequest): OperatorRequest {
  const { operator } = operatorContext(request).session;
  return { ...requestIdsOf(request), operator: operator.name, operatorId: operator.id };
}

/** Pretty JSON for a <pre>, cut at `max` characters so one large batch cannot swell the page. */
export function prettyJson(value: unknown, max: number): { text: string; size: number; cut: boolean } {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return { text: text.slice(0, max), size: text.length, cut: text.length > max };
}
