import type { FastifyInstance } from 'fastify';

export interface RegisteredRoute {
  method: string;
  url: string;
}

const catalogs = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/**
 * Records every route as it is registered, so checks of the OpenAPI document can walk what the
 * server really serves rather than what the document happens to contain.
 */
export function trackRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  catalogs.set(app, routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      // Fastify adds HEAD beside every GET on its own; it is not an operation of ours.
      if (method !== 'HEAD') routes.push({ method, url: route.url });
    }
  });
}

export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return catalogs.get(app) ?? [];
}
