import type { FastifyRequest } from 'fastify';
import type { UserTokenGrant } from '../../domain/tokens/tokens.repository.js';

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
