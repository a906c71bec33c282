import type { FastifyRequest } from 'fastify';
import type { AuditActor } from '../../../domain/audit/audit-actions.js';
import { requestIdsOf } from '../../audit-actor.js';
import { enterpriseContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';

/** The administrator as the audit log names him: the console's app, his account, this request. */
export function actorOf(request: FastifyRequest): AuditActor {
  const { member } = enterpriseContext(request).session;
  return { appId: member.appId, operator: member.account, ...requestIdsOf(request) };
}

export const enterpriseIdOf = (request: FastifyRequest) =>
  enterpriseContext(request).session.member.enterpriseId;

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
