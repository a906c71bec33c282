/**
 * What a route's success reaches beyond the objects its request names. `whole-platform`: it
 * changes or copies what every tenant and operator shares at once (the runtime's signing key, the
 * rule every operator signs in under, a backup of every table). Declared beside the route's access
 * so that walks which call routes for real (fuzzers, role walks) can leave such routes out by what
 * they do rather than by a list of their paths.
 */
export type RouteEffect = 'whole-platform';

declare module 'fastify' {
  interface FastifyContextConfig {
    effect?: RouteEffect;
  }
}
