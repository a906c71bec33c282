import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Config } from './config.js';
import { withTimeLimit, type Db } from './db/client.js';
import { formFields } from './http/form-body.js';
import { adminApi } from './http/admin/index.js';
import { accessChecks } from './http/access/checks.js';
import { installAccess } from './http/access/enforce.js';
import { listenerOf, notOnThisListener } from './http/admin-listener.js';
import { capConnections, connectionOptions } from './http/connection-bounds.js';
import { registerApiDocs } from './http/docs/index.js';
import type { App } from './http/app-type.js';
import {
  answerFrameworkError,
  installErrorHandler,
  installNotFound,
  MAX_PARAM_LENGTH,
} from './http/error-handler.js';
import { consoleSurface } from './http/console/index.js';
import { memberSurface } from './http/me/index.js';
import { tokenRoute } from './http/oauth/token.js';
import { healthRoutes } from './http/ops/health.js';
import { metricsRoutes } from './http/ops/metrics.js';
import { rootRedirectRoute } from './http/ops/root-redirect.js';
import { orderSurface } from './http/order/index.js';
import { runtimeSurface } from './http/runtime/index.js';
import { jwksRoute } from './http/runtime/jwks.js';
import { webhooksSurface } from './http/webhooks/index.js';
import { clientRequestIdOf, stampRequestIds } from './http/request-ids.js';
import { RequestLogController } from './http/request-log.js';
import { installOverloadShedding } from './http/overload.js';
import { installSecurityHeaders } from './http/security-headers.js';
import { CONSOLE_PREFIX, ME_PREFIX, ORDER_PREFIX, RUNTIME_PREFIX, WEBHOOKS_PREFIX } from './http/surface.js';
import { intLikeKeyword, refuseControlCharacters } from './http/validation.js';
import { createServices, type Services } from './services.js';
import type { RelayKeyMaterial } from './domain/relay/relay-keys.js';
import { relayStatusRoutes } from './http/relay/relay-status.js';

export interface BuildOptions {
  config: Config;
  db: Db;
  adminKey: string;
  /** A pino logger; none in tests. */
  logger?: FastifyBaseLogger;
  /** The runtime's clock; tests move it to expire leases. */
  now?: () => number;
  /** On a relay (`keyward relay serve`): its key and grant; adds its status page. */
  relay?: RelayKeyMaterial;
}

/** Builds the whole server around an open database; `server.ts` listens, tests inject. */
export async function buildApp(options: BuildOptions): Promise<App & { services: Services }> {
  const { config, db } = options;
  const { trustProxy } = config;
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    // One line per request, at completion, rather than Fastify's two.
    logController: new RequestLogController(),
    bodyLimit: config.limits.bodyBytes,
    // Who the caller is for login lockouts (request.ip): see TRUST_PROXY in config.ts. A number
    // of proxies is the hops to believe, which Fastify's types only take as a function.
    trustProxy:
      typeof trustProxy === 'number' ? (_address: string, hop: number) => hop < trustProxy : trustProxy,
    // Slow senders cannot hold connections (connection-bounds.ts). Fastify sets requestTimeout and
    // keepAliveTimeout on the server from its own options, whatever `http` says: both are given.
    requestTimeout: config.connections.requestTimeoutMs,
    keepAliveTimeout: config.connections.keepAliveTimeoutMs,
    http: connectionOptions(config.connections),
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: answerFrameworkError,
    // Always our own: a caller's x-request-id is kept apart (request-ids.ts).
    genReqId: () => randomUUID(),
    childLoggerFactory: (logger, bindings, options, raw) => {
      const clientRequestId = clientRequestIdOf(raw.headers);
      return logger.child(
        clientRequestId === undefined ? bindings : { ...bindings, clientRequestId },
        options,
      );
    },
    ajv: {
      // Strict types: integer fields go through `x-int`, nothing else is coerced.
      customOptions: { coerceTypes: false, removeAdditional: false, allErrors: false, strict: false },
      plugins: [intLikeKeyword],
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  capConnections(app.server, config.connections);

  // A request or an async batch holds the database (on the embedded one: the whole server's) for
  // a bounded time.
  const services = createServices(withTimeLimit(db, config.limits.transactionLimitMs), config, {
    unlimitedDb: db,
    adminKey: options.adminKey,
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.relay === undefined ? {} : { relay: options.relay }),
  });
  app.decorate('services', services);
  app.decorate('config', config);
  app.decorate('db', db);

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, formFields(String(body))),
  );
  app.addHook('onSend', async (request, reply) => {
    stampRequestIds(request, reply);
  });
  installSecurityHeaders(app);
  app.addHook('onClose', async () => {
    await services.gate.close();
  });

  // Before any other hook of a request: a server too late to answer well sheds calls first.
  await installOverloadShedding(app, config);
  // Cookies are parsed before the access check, which reads the console's session cookie.
  await app.register(cookie);
  const adminApart = config.adminListener !== undefined;
  // Before any route: every route registered after this declares who may call it, and one hook
  // checks each request against the route it matched (access/enforce.ts).
  installAccess(app, {
    checks: accessChecks(services, config, options.adminKey),
    adminApart,
    listenerOf,
    notHere: notOnThisListener,
  });
  installNotFound(app, { adminApart, listenerOf });
  installErrorHandler(app, config.limits.bodyBytes);
  app.addHook('preHandler', refuseControlCharacters);
  // Before every route: the document is built from the routes as they register.
  await registerApiDocs(app);

  rootRedirectRoute(app);
  healthRoutes(app);
  jwksRoute(app);
  metricsRoutes(app);
  tokenRoute(app);
  await app.register(adminApi(), { prefix: '/admin' });
  await app.register(orderSurface, { prefix: ORDER_PREFIX });
  await app.register(memberSurface, { prefix: ME_PREFIX });
  await app.register(runtimeSurface, { prefix: RUNTIME_PREFIX });
  await app.register(webhooksSurface, { prefix: WEBHOOKS_PREFIX });
  await app.register(consoleSurface(options.adminKey), { prefix: CONSOLE_PREFIX });
  if (options.relay !== undefined) relayStatusRoutes(app);
  return app;
}
