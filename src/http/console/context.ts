import type { FastifyRequest } from 'fastify';
import type { ConsoleSession } from '../../domain/console/console-sessions.service.js';
import type { Locale, Translate } from './i18n/index.js';

/** What every console page knows about its request: the language and who is signed in. */
export interface ConsoleContext {
  locale: Locale;
  t: Translate;
  /** The request's path and query, for the language switch to come back to. */
  path: string;
  session: ConsoleSession | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    consoleContext?: ConsoleContext;
  }
}

export function contextOf(request: FastifyRequest): ConsoleContext {
  if (!request.consoleContext) throw new Error('console route outside the console plugin');
  return request.consoleContext;
}

/** A console handler reached without the session its route declares: answered as not found. */
export class ConsoleAccessError extends Error {}

/**
 * The operator's context, for every operator page and action: without an operator's session it
 * throws, so a handler cannot act for anyone else even if its route were declared wrong.
 */
export function operatorContext(request: FastifyRequest): ConsoleContext & {
  session: Extract<ConsoleSession, { kind: 'operator' }>;
} {
  const context = request.consoleContext;
  if (context?.session?.kind !== 'operator')
    throw new ConsoleAccessError('operator page without an operator');
  return { ...context, session: context.session };
}

/** For pages behind the enterprise gate: the administrator and his enterprise. */
export function enterpriseContext(request: FastifyRequest): ConsoleContext & {
  session: Extract<ConsoleSession, { kind: 'enterprise' }>;
} {
  const context = request.consoleContext;
  if (context?.session?.kind !== 'enterprise') {
    throw new ConsoleAccessError('enterprise page without its administrator');
  }
  return { ...context, session: context.session };
}
