import type { FastifyRequest } from 'fastify';
import type { UserTokenGrant } from '../../domain/tokens/tokens.repository.js';
import type { OperatorRole } from '../../db/schema.js';

/** The application behind an app token, as the guards admitted it. */
export interface AppPrincipal {
  appId: string;
  appKey: string;
  channels: string[];
}

/** The member behind a user token, already checked against the app and the path's enterprise. */
export type MemberPrincipal = UserTokenGrant;

declare module 'fastify' {
  interface FastifyRequest {
    appPrincipal?: AppPrincipal;
    memberPrincipal?: MemberPrincipal;
  }
}

/** For handlers behind a guard: the guard has set the principal or the request never got here. */
export function appOf(request: FastifyRequest): AppPrincipal {
  if (!request.appPrincipal) throw new Error('route is missing its guard');
  return request.appPrincipal;
}

export function memberOf(request: FastifyRequest): MemberPrincipal {
  if (!request.memberPrincipal) throw new Error('route is missing its guard');
  return request.memberPrincipal;
}

/**
 * The operator behind an admin API call or an operator console session: a named operator (by a
 * personal token) or the admin key, which names no one (`operatorId` null) and holds every role.
 */
export interface OperatorPrincipal {
  operatorId: string | null;
  /** What the audit log's `operator` says: the operator's name, or the surface the key came through. */
  name: string;
  /** Every role the call holds: a token's own and its operator's (see mayAct). */
  roles: OperatorRole[];
  /** The personal token the call came with, if any. */
  tokenId: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    operatorPrincipal?: OperatorPrincipal;
  }
}

export function operatorOf(request: FastifyRequest): OperatorPrincipal {
  if (!request.operatorPrincipal) throw new Error('route is missing its guard');
  return request.operatorPrincipal;
}
