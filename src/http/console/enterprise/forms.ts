import type { FastifyRequest } from 'fastify';
import type { AuditActor } from '../../../domain/audit/audit-actions.js';
import { requestIdsOf } from '../../audit-actor.js';
import { enterpriseContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';

type Body = Record<string, unknown> | null | undefined;

/** A form field as text: absent, a file or anything else is ''. */
export function field(request: FastifyRequest, name: string): string {
  const value = (request.body as Body)?.[name];
  return typeof value === 'string' ? value : '';
}

/** Every value of a repeated field (checkboxes), as text. */
export function fields(request: FastifyRequest, name: string): string[] {
  const value = (request.body as Body)?.[name];
  const all = Array.isArray(value) ? value : [value];
  return all.filter((v): v is string => typeof v === 'string' && v !== '');
}

/** The administrator as the audit log names him: the console's app, his account, this request. */
export function actorOf(request: FastifyRequest): AuditActor {
  const { member } = enterpriseContext(request).session;
  return { appId: member.appId, operator: member.account, ...requestIdsOf(request) };
}

export const enterpriseIdOf = (request: FastifyRequest) =>
  enterpriseContext(request).session.member.enterpriseId;

/** `?page=` as a page number, 1 when absent or nonsense. */
export function pageOf(value: string | undefined): number {
  return Math.max(1, Math.min(100_000, Number.parseInt(value ?? '1', 10) || 1));
}

/** What the last action did, named in the redirect (`?done=`) and said on the next page. */
const DONE: Record<string, MessageKey> = {
  added: 'done.added',
  edited: 'done.edited',
  password: 'done.password',
  deleted: 'done.deleted',
  assigned: 'done.assigned',
  unassigned: 'done.unassigned',
  lent: 'done.lent',
  returned: 'done.returned',
};

export type Done = keyof typeof DONE;

export function doneOf(request: FastifyRequest): MessageKey | undefined {
  return DONE[String((request.query as Record<string, unknown>).done ?? '')];
}

export const memberPath = (globalId: string) => `/console/enterprise/members/${encodeURIComponent(globalId)}`;
