import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteOptions } from 'fastify';
import { isAccess, listenersOf, type Access, type Listener, type Who } from './access.js';
import type { RouteEffect } from './effect.js';

/** Checks one kind of caller; throws or answers the refusal itself. */
export type Check<W extends Who> = (
  request: FastifyRequest,
  reply: FastifyReply,
  access: Extract<Access, { who: W }>,
) => Promise<unknown>;

export type Checks = { readonly [W in Who]: Check<W> };

export interface AccessSettings {
  checks: Checks;
  /** Whether the operator's surfaces have a listener of their own (see listenersOf). */
  adminApart: boolean;
  /** Which listener a request came through. */
  listenerOf(request: FastifyRequest): Listener;
  /** The answer for a route that is not served on this listener: as for an unknown path. */
  notHere(request: FastifyRequest, reply: FastifyReply): FastifyReply;
}

/** The access of the route a request matched; undefined when none matched (the 404 handler answers). */
export function accessOf(request: FastifyRequest): Access | undefined {
  return request.routeOptions.config.access;
}

/** Whether a route with this access is served on the listener a request came through. */
export function servedHere(
  settings: Pick<AccessSettings, 'adminApart'>,
  access: Access,
  on: Listener,
): boolean {
  return !settings.adminApart || listenersOf(access).includes(on);
}

/** A registered route as its declaration stands: what route walks go over. */
export interface DeclaredRoute {
  method: string;
  url: string;
  access: Access;
  /** What the route validates (body, querystring, params): what a fuzzer draws its input from. */
  schema: FastifySchema | undefined;
  effect: RouteEffect | undefined;
}

const declared = new WeakMap<FastifyInstance, RouteOptions[]>();

/** Every route the server registered (HEAD beside GET included), with its access: after ready. */
export function declaredRoutes(app: FastifyInstance): DeclaredRoute[] {
  return (declared.get(app) ?? []).flatMap((route) => {
    const access = route.config?.access;
    if (access === undefined) return [];
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    return methods.map((method) => ({
      method,
      url: route.url,
      access,
      schema: route.schema,
      effect: route.config?.effect,
    }));
  });
}

function describe(route: RouteOptions): string {
  const methods = Array.isArray(route.method) ? route.method.join(',') : route.method;
  return `${methods} ${route.url}`;
}

/**
 * Installs the one access check. Registration records every route, and the server does not start
 * while any route declares no access (or one it does not know). Each request is then checked
 * against the route it matched, before anything else of the route runs.
 */
export function installAccess(app: FastifyInstance, settings: AccessSettings): void {
  const routes: RouteOptions[] = [];
  declared.set(app, routes);
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  // At ready rather than in onRoute: a plugin's routes (the API reference's) are declared by the
  // plugin's own onRoute hook, which runs after this one.
  app.addHook('onReady', async () => {
    const undeclared = routes.filter((route) => !isAccess(route.config?.access)).map(describe);
    if (undeclared.length > 0) {
      throw new Error(`routes that declare no access (config.access): ${undeclared.join('; ')}`);
    }
  });

  app.addHook('onRequest', async (request, reply) => {
    const access = accessOf(request);
    if (access === undefined) return;
    if (!servedHere(settings, access, settings.listenerOf(request))) return settings.notHere(request, reply);
    return check(settings.checks, access, request, reply);
  });
}

function check(
  checks: Checks,
  access: Access,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<unknown> {
  switch (access.who) {
    case 'public':
      return checks.public(request, reply, access);
    case 'app':
      return checks.app(request, reply, access);
    case 'runtime':
      return checks.runtime(request, reply, access);
    case 'member':
      return checks.member(request, reply, access);
    case 'admin':
      return checks.admin(request, reply, access);
    case 'metrics':
      return checks.metrics(request, reply, access);
    case 'console-public':
      return checks['console-public'](request, reply, access);
    case 'console-shared':
      return checks['console-shared'](request, reply, access);
    case 'operator-sign-in':
      return checks['operator-sign-in'](request, reply, access);
    case 'console-session':
      return checks['console-session'](request, reply, access);
    case 'enterprise-session':
      return checks['enterprise-session'](request, reply, access);
    case 'operator-session':
      return checks['operator-session'](request, reply, access);
  }
}
