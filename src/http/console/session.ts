import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { safeEqual } from '../../domain/shared/secrets.js';
import type { Services } from '../../services.js';
import { needsCsrfToken, type Access } from '../access/access.js';
import { contextOf, type ConsoleContext } from './context.js';
import { localeOf, translator } from './i18n/index.js';

/** The session cookie: its value is the session's secret; the database keeps only its hash. */
export const SESSION_COOKIE = 'keyward_session';
const COOKIE_PATH = '/console';

/** Secure when the request came over https (as Fastify sees it, TRUST_PROXY) or COOKIE_SECURE=1. */
function secureFor(request: FastifyRequest, config: Config): boolean {
  return config.cookieSecure || request.protocol === 'https';
}

export function setSessionCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  config: Config,
  secret: string,
) {
  reply.setCookie(SESSION_COOKIE, secret, {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: secureFor(request, config),
  });
}

export function clearSessionCookie(request: FastifyRequest, reply: FastifyReply, config: Config) {
  reply.clearCookie(SESSION_COOKIE, {
    path: COOKIE_PATH,
    httpOnly: true,
    sameSite: 'strict',
    secure: secureFor(request, config),
  });
}

export function sessionSecretOf(request: FastifyRequest): string | undefined {
  const secret = request.cookies[SESSION_COOKIE];
  return typeof secret === 'string' && /^[A-Za-z0-9_-]{20,100}$/.test(secret) ? secret : undefined;
}

/**
 * The console's context for a request: its language, and its session when the cookie names a live
 * one (not looked up for the console's assets). Loaded once, by the access check of the matched
 * route or, for an unknown console path, by the console's own hook.
 */
export async function loadConsoleContext(
  services: Services,
  request: FastifyRequest,
  options: { withSession: boolean },
): Promise<ConsoleContext> {
  if (request.consoleContext !== undefined) return request.consoleContext;
  const locale = localeOf(request);
  const secret = options.withSession ? sessionSecretOf(request) : undefined;
  const session = secret === undefined ? undefined : await services.consoleSessions.resolve(secret);
  request.consoleContext = { locale, t: translator(locale), path: pageOf(request), session };
  return request.consoleContext;
}

/**
 * The page a request shows, for the language switch to come back to. A post's answer (a form
 * refused, say) is shown at the post's address, which has no page to come back to: the page the
 * form was on, named by the browser's same-origin Referer, is the one; else the console's start.
 */
function pageOf(request: FastifyRequest): string {
  if (request.method === 'GET' || request.method === 'HEAD') return request.url;
  const referer = request.headers.referer;
  if (referer === undefined) return '/console';
  try {
    const from = new URL(referer);
    const samePage =
      from.origin === new URL(`${request.protocol}://${request.host}`).origin &&
      /^\/console(\/|$)/.test(from.pathname);
    return samePage ? `${from.pathname}${from.search}` : '/console';
  } catch {
    return '/console';
  }
}

/**
 * A state change must come from a console page: the browser's Origin, when it sends one, is this
 * server, and where the route acts for a session (its access says so) the form carries the
 * session's CSRF token. SameSite=Strict already keeps the cookie off cross-site posts; this holds
 * even where that would not.
 */
export function csrfRefused(request: FastifyRequest, access: Access): boolean {
  if (request.method !== 'POST') return false;
  // Fetch metadata first (every current browser sends it), then the Origin, which console pages
  // let the browser send on same-origin posts (Referrer-Policy: same-origin).
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return true;
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) return true;
  if (!needsCsrfToken(access)) return false;
  const { session } = contextOf(request);
  const body = request.body as Record<string, unknown> | null | undefined;
  const given = body?._csrf;
  return session === undefined || typeof given !== 'string' || !safeEqual(given, session.csrf);
}
