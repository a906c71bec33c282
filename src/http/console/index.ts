import multipart from '@fastify/multipart';
import type { FastifyError, RouteOptions } from 'fastify';
import type { Who } from '../access/access.js';
import { accessOf } from '../access/enforce.js';
import type { App } from '../app-type.js';
import { formatValidationError } from '../validation.js';
import { consoleAssetRoutes } from './assets.js';
import { enterprisePages } from './enterprise/index.js';
import { ConsoleAccessError } from './context.js';
import { sendErrorPage } from './error-page.js';
import { landingRoute, languageRoute } from './landing.js';
import { FORM_LIMIT_BYTES, UPLOAD_LIMIT_BYTES } from './limits.js';
import { operatorPages } from './operator/index.js';
import { CONSOLE_POLICY } from './render.js';
import { csrfRefused, loadConsoleContext } from './session.js';
import { ssoRoutes } from './sso/index.js';
import { operatorSignInRoutes } from './operator-sign-in.js';
import { enterpriseSignInRoutes, signOutRoute } from './sign-in.js';

/**
 * The web console at /console (ADR 12): server-rendered pages over the same services as the API.
 * Its own cookies, CSRF check, content policy, error pages and not-found page; the rest of the
 * server (control characters, body limits, timeouts, security headers) applies as to the API.
 */
export function consoleSurface(adminKey: string) {
  return async function registerConsole(app: App): Promise<void> {
    app.addHook('onRoute', (route) => {
      route.bodyLimit ??= FORM_LIMIT_BYTES;
    });
    await app.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 20, fieldSize: 4096, parts: 21 },
    });
    // Who may open a page is checked from its route (access/enforce.ts), which loads the context;
    // an unknown console path still gets its page in the reader's language.
    app.addHook('onRequest', async (request) => {
      await loadConsoleContext(app.services, request, { withSession: true });
    });
    app.addHook('preHandler', async (request, reply) => {
      const access = accessOf(request);
      if (access !== undefined && csrfRefused(request, access)) {
        return sendErrorPage(request, reply, 403, 'error.csrf');
      }
    });
    app.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', CONSOLE_POLICY);
      // The API sends no referrer at all; console pages let the browser name this origin on its own
      // posts, which the CSRF check reads (session.ts). Nothing leaves for other sites.
      reply.header('referrer-policy', 'same-origin');
    });
    app.setNotFoundHandler((request, reply) => sendErrorPage(request, reply, 404, 'error.notFound'));
    app.setErrorHandler((error: FastifyError, request, reply) => {
      if (error instanceof ConsoleAccessError) return sendErrorPage(request, reply, 404, 'error.notFound');
      if (error.validation) {
        const message = formatValidationError(error.validation, error.validationContext ?? 'body');
        return sendErrorPage(request, reply, 400, 'error.input', { message });
      }
      if (error.statusCode === 413 || error.code === 'FST_REQ_FILE_TOO_LARGE') {
        const limit =
          error.code === 'FST_REQ_FILE_TOO_LARGE' ? UPLOAD_LIMIT_BYTES : request.routeOptions.bodyLimit;
        return sendErrorPage(request, reply, 413, 'error.input', {
          message: `the form or upload is larger than ${Math.floor(limit / 1024)} KiB`,
        });
      }
      request.log.error({ err: error }, 'console request failed');
      return sendErrorPage(request, reply, 500, 'error.internal', { requestId: request.id });
    });

    consoleAssetRoutes(app);
    landingRoute(app);
    languageRoute(app);
    enterpriseSignInRoutes(app);
    operatorSignInRoutes(app, adminKey);
    signOutRoute(app);
    ssoRoutes(app);
    // Each area's pages in a scope that refuses, at registration, a page declared for anyone else.
    await app.register(async (area: App) => {
      area.addHook('onRoute', declaredFor('operator-session'));
      operatorPages(area);
    });
    await app.register(async (area: App) => {
      area.addHook('onRoute', declaredFor('enterprise-session'));
      enterprisePages(area);
    });
  };
}

function declaredFor(who: Who) {
  return (route: RouteOptions): void => {
    if (route.config?.access?.who !== who) {
      throw new Error(`console route ${route.url} must declare access ${who}`);
    }
  };
}
