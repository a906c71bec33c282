import type { FastifyRequest } from 'fastify';
import type { AuditActor, OperatorRequest, RequestIds } from '../domain/audit/audit-actions.js';
import { appOf, memberOf } from './guards/principal.js';
import { clientRequestIdOf } from './request-ids.js';

/** The request as audit rows name it: the server's id, and the caller's own when sane. */
export function requestIdsOf(request: FastifyRequest): RequestIds {
  return { requestId: request.id, clientRequestId: clientRequestIdOf(request.headers) ?? null };
}

/**
 * A call in which the app acts alone: the order service (ops 6–7 name their operator themselves)
 * and the webhooks API, on the app's own endpoints.
 */
export function appActor(request: FastifyRequest): AuditActor {
  return { appId: appOf(request).appId, operator: null, ...requestIdsOf(request) };
}

/** A member-center call: the member acts, through the app, and is named by its account. */
export function memberActor(request: FastifyRequest): AuditActor {
  return { appId: appOf(request).appId, operator: memberOf(request).account, ...requestIdsOf(request) };
}

/** A runtime call: the app acts, for the member when a user token names one. */
export function runtimeActor(request: FastifyRequest): AuditActor {
  return {
    appId: appOf(request).appId,
    operator: request.memberPrincipal?.account ?? null,
    ...requestIdsOf(request),
  };
}

/**
 * An admin API call as the audit log names it: the named operator behind a personal token (id
 * and name), or the admin key's surface when the key was used.
 */
export function operatorRequestOf(request: FastifyRequest): OperatorRequest {
  const principal = request.operatorPrincipal;
  return {
    ...requestIdsOf(request),
    ...(principal === undefined ? {} : { operator: principal.name, operatorId: principal.operatorId }),
  };
}
