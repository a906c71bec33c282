import type { FastifyRequest } from 'fastify';
import type { OperatorRequest } from '../../../domain/audit/audit-actions.js';
import { CONSOLE_OPERATOR } from '../../../domain/console/console-client.js';
import { requestIdsOf } from '../../audit-actor.js';

/** A posted form's fields (urlencoded: one value per name). */
export type FormBody = Record<string, unknown> | null | undefined;

export function formText(request: FastifyRequest, name: string): string {
  const value = (request.body as FormBody)?.[name];
  return typeof value === 'string' ? value : '';
}

export function formChecked(request: FastifyRequest, name: string): boolean {
  return formText(request, name) !== '';
}

/** A change made in the console's operator area: audited as the console, with the request's ids. */
export function consoleRequest(request: FastifyRequest): OperatorRequest {
  return { ...requestIdsOf(request), operator: CONSOLE_OPERATOR };
}

/** A page number from the query: 1 when absent or nonsense, never beyond a sane bound. */
export function pageOf(value: string | undefined): number {
  return Math.max(1, Math.min(100_000, Number.parseInt(value ?? '1', 10) || 1));
}

/** Pretty JSON for a <pre>, cut at `max` characters so one large batch cannot swell the page. */
export function prettyJson(value: unknown, max: number): { text: string; size: number; cut: boolean } {
  const text = JSON.stringify(value, null, 2) ?? 'null';
  return { text: text.slice(0, max), size: text.length, cut: text.length > max };
}
