import cookie from '@fastify/cookie';
import multipart from '@fastify/multipart';
import type { FastifyError } from 'fastify';
import type { App } from '../app-type.js';
import { formatValidationError } from '../validation.js';
import { consoleAssetRoutes } from './assets.js';
import { enterprisePages } from './enterprise/index.js';
import { sendErrorPage } from './error-page.js';
import { landingRoute, languageRoute } from './landing.js';
import { FORM_LIMIT_BYTES, UPLOAD_LIMIT_BYTES } from './limits.js';
import { operatorPages } from './operator/index.js';
import { CONSOLE_POLICY, redirectTo } from './render.js';
import { csrfRefusal, gateOf, loadContext } from './session.js';
import { enterpriseSignInRoutes, operatorSignInRoutes, signOutRoute } from './sign-in.js';

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
    await app.register(cookie);
    await app.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: UPLOAD_LIMIT_BYTES, files: 1, fields: 20, fieldSize: 4096, parts: 21 },
    });
    app.addHook('onRequest', loadContext(app.services));
    app.addHook('preHandler', async (request, reply) => {
      const gate = gateOf(request);
      if (gate === 'sign-in-operator') return redirectTo(reply, '/console/operator/sign-in?note=expired');
      if (gate === 'sign-in-enterprise') return redirectTo(reply, '/console/sign-in?note=expired');
      if (gate === 'not-found') return sendErrorPage(request, reply, 404, 'error.notFound');
      const refusal = csrfRefusal(request);
      if (refusal === 'csrf') return sendErrorPage(request, reply, 403, 'error.csrf');
    });
    app.addHook('onSend', async (_request, reply) => {
      reply.header('content-security-policy', CONSOLE_POLICY);
      // The API sends no referrer at all; console pages let the browser name this origin on its own
      // posts, which the CSRF check reads (session.ts). Nothing leaves for other sites.
      reply.header('referrer-policy', 'same-origin');
    });
    app.setNotFoundHandler((request, reply) => sendErrorPage(request, reply, 404, 'error.notFound'));
    app.setErrorHandler((error: FastifyError, request, reply) => {
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
    operatorPages(app);
    enterprisePages(app);
  };
}
