import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Listener } from './access/access.js';
import { servedHere } from './access/enforce.js';
import { DatabaseBusyError } from '../db/busy.js';
import { CommonCode, commonMessages } from '../errors/common-codes.js';
import { KeywardError } from '../errors/keyward-error.js';
import { BUSINESS_FAILURE_STATUS, failure } from './envelope.js';
import { overloadAnswer } from './overload.js';
import { TOKEN_BODY_LIMIT_BYTES } from './oauth/token-schema.js';
import { surfaceOfRequest, validationCode, type Surface } from './surface.js';
import { stampRequestIds } from './request-ids.js';
import { setSecurityHeaders } from './security-headers.js';
import { formatValidationError } from './validation.js';

/** Errors Fastify raises while reading a body: the caller's fault, answered as validation. */
const BODY_ERRORS: Record<string, string> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'body: Content-Type must be application/json',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'body: must not be empty',
  FST_ERR_CTP_INVALID_JSON_BODY: 'body: is not valid JSON',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'body: Content-Length does not match the body',
  FST_ERR_CTP_BODY_TOO_LARGE: 'body: larger than the limit',
};

function sendFailure(
  reply: FastifyReply,
  surface: Surface,
  status: number,
  code: string,
  message: string,
  cause: string,
  data?: unknown,
): FastifyReply {
  if (surface === 'admin') return reply.code(status === 299 ? 400 : status).send({ error: message });
  if (surface === 'oauth') {
    const error = code === CommonCode.internal ? 'server_error' : 'invalid_request';
    return reply.code(code === CommonCode.internal ? 500 : 400).send({ error, error_description: message });
  }
  return reply.code(status).send(failure(code, message, cause, data));
}

function isJsonSyntaxError(error: FastifyError): boolean {
  return error instanceof SyntaxError || (error.statusCode === 400 && /JSON/.test(error.message));
}

/**
 * What to tell a caller whose body Fastify could not read (not JSON, too large, of another type),
 * naming the body; undefined for any other error.
 */
export function bodyErrorMessage(error: FastifyError, bodyLimitBytes: number): string | undefined {
  if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return `body: larger than the limit of ${bodyLimitBytes} bytes`;
  return (
    BODY_ERRORS[error.code] ??
    (isJsonSyntaxError(error) ? BODY_ERRORS.FST_ERR_CTP_INVALID_JSON_BODY : undefined)
  );
}

export function installErrorHandler(app: FastifyInstance, bodyLimitBytes: number): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const surface = surfaceOfRequest(request);
    if (error instanceof KeywardError) {
      if (error.options.retryAfterSeconds !== undefined)
        reply.header('retry-after', String(error.options.retryAfterSeconds));
      return sendFailure(
        reply,
        surface,
        error.httpStatus,
        error.code,
        error.message,
        error.options.cause ?? error.message,
        error.options.data,
      );
    }
    if (error.validation) {
      const message = formatValidationError(error.validation, error.validationContext ?? 'body');
      return sendFailure(reply, surface, BUSINESS_FAILURE_STATUS, validationCode(surface), message, message);
    }
    // More calls at once than the pool holds: the database answers, the caller should come back.
    if (error instanceof DatabaseBusyError) return reply.send(overloadAnswer(request, reply, error.message));
    if (surface === 'oauth' && error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply.code(413).send({
        error: 'invalid_request',
        error_description: `body: larger than the limit of ${TOKEN_BODY_LIMIT_BYTES} bytes`,
      });
    }
    const bodyMessage = bodyErrorMessage(error, bodyLimitBytes);
    if (bodyMessage !== undefined) {
      return sendFailure(
        reply,
        surface,
        BUSINESS_FAILURE_STATUS,
        validationCode(surface),
        bodyMessage,
        bodyMessage,
      );
    }
    // A plugin's refusal of a path it serves (the API reference's files: a forbidden or missing
    // file) is the caller's: answered as an unknown path, not as a fault of ours.
    if (error.statusCode === 403 || error.statusCode === 404) {
      const path = request.url.split('?')[0] ?? '';
      return reply
        .code(404)
        .send(failure(CommonCode.notFound, commonMessages[CommonCode.notFound], `${request.method} ${path}`));
    }
    // A fault of ours: logged with the request id, answered without detail.
    request.log.error({ err: error }, 'request failed');
    return sendFailure(
      reply,
      surface,
      BUSINESS_FAILURE_STATUS,
      CommonCode.internal,
      commonMessages[CommonCode.internal],
      request.id,
    );
  });
}

/**
 * Longest path parameter the router hands to a route. Beyond any field's own bound, so that the
 * route's schema names the parameter that is too long; longer still is refused by the router.
 */
export const MAX_PARAM_LENGTH = 1024;

/**
 * Fastify's router refuses a URL it cannot decode or a path parameter past MAX_PARAM_LENGTH before
 * any route or hook runs; answered in the surface's envelope like any other malformed request.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  stampRequestIds(request, reply);
  setSecurityHeaders(reply);
  const surface = surfaceOfRequest(request);
  const message =
    error.code === 'FST_ERR_BAD_URL'
      ? 'path: is not a valid URL'
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? `path: a path parameter is longer than ${MAX_PARAM_LENGTH} characters`
        : undefined;
  if (message === undefined) {
    request.log.error({ err: error }, 'request failed');
    return sendFailure(
      reply,
      surface,
      BUSINESS_FAILURE_STATUS,
      CommonCode.internal,
      commonMessages[CommonCode.internal],
      request.id,
    );
  }
  return sendFailure(reply, surface, BUSINESS_FAILURE_STATUS, validationCode(surface), message, message);
}

/** Answers an unknown path with 404, or 405 when the path exists under another method here. */
export function installNotFound(
  app: FastifyInstance,
  where: { adminApart: boolean; listenerOf(request: FastifyRequest): Listener },
): void {
  const patterns: Array<{ pattern: RegExp; route: RouteOptions }> = [];
  app.addHook('onRoute', (route) => {
    const source = route.url
      .split('/')
      .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    patterns.push({ pattern: new RegExp(`^${source}/?$`), route });
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const on = where.listenerOf(request);
    // A route of the other listener is not known here: 405 would say that it exists.
    const known = patterns.some(({ pattern, route }) => {
      const access = route.config?.access;
      return pattern.test(path) && access !== undefined && servedHere(where, access, on);
    });
    const code = known ? CommonCode.methodNotAllowed : CommonCode.notFound;
    const status = known ? 405 : 404;
    return reply.code(status).send(failure(code, commonMessages[code], `${request.method} ${path}`));
  });
}
