import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.js';
import { safeEqual } from '../../domain/shared/secrets.js';
import type { Services } from '../../services.js';
import { OPERATOR_CONSOLE_PREFIX } from '../surface.js';
import { contextOf } from './context.js';
import { localeOf, translator } from './i18n/index.js';

/** The session cookie: its value is the session's secret; the database keeps only its hash. */
export const SESSION_COOKIE = 'keyward_session';
const COOKIE_PATH = '/console';

const OPERATOR_SIGN_IN = `${OPERATOR_CONSOLE_PREFIX}/sign-in`;
export const ENTERPRISE_PREFIX = '/console/enterprise';

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

const pathOf = (request: FastifyRequest) => request.url.split('?')[0] ?? '';

/** Every console request: its language, and its session when the cookie names a live one. */
export function loadContext(services: Services) {
  return async function consoleContext(request: FastifyRequest): Promise<void> {
    const locale = localeOf(request);
    const secret = pathOf(request).startsWith('/console/assets/') ? undefined : sessionSecretOf(request);
    const session = secret === undefined ? undefined : await services.consoleSessions.resolve(secret);
    request.consoleContext = { locale, t: translator(locale), path: pageOf(request), session };
  };
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

export type Refusal = 'csrf' | 'not-found';

/**
 * Which area a path belongs to, and whether this request may enter: the operator's pages need an
 * operator session, the enterprise's an enterprise administrator's. Without one the browser is
 * sent to sign in; with the other kind it gets 404, as for anything it may not see.
 */
export function gateOf(
  request: FastifyRequest,
): 'pass' | 'sign-in-operator' | 'sign-in-enterprise' | Refusal {
  const path = pathOf(request);
  const { session } = contextOf(request);
  if (path.startsWith(OPERATOR_CONSOLE_PREFIX) && path !== OPERATOR_SIGN_IN) {
    if (session === undefined) return 'sign-in-operator';
    if (session.kind !== 'operator') return 'not-found';
  }
  if (path === ENTERPRISE_PREFIX || path.startsWith(`${ENTERPRISE_PREFIX}/`)) {
    if (session === undefined) return 'sign-in-enterprise';
    if (session.kind !== 'enterprise') return 'not-found';
  }
  return 'pass';
}

/** Sign-in forms post before any session exists: for them the origin check is the defence. */
const SIGN_IN_POSTS = new Set([OPERATOR_SIGN_IN, '/console/sign-in']);

/**
 * A state change must come from a console page: the browser's Origin, when it sends one, is this
 * server, and (after sign-in) the form carries the session's CSRF token. SameSite=Strict already
 * keeps the cookie off cross-site posts; this holds even where that would not.
 */
export function csrfRefusal(request: FastifyRequest): Refusal | undefined {
  if (request.method !== 'POST') return undefined;
  // Fetch metadata first (every current browser sends it), then the Origin, which console pages
  // let the browser send on same-origin posts (Referrer-Policy: same-origin).
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return 'csrf';
  const origin = request.headers.origin;
  if (origin !== undefined && origin !== `${request.protocol}://${request.host}`) return 'csrf';
  if (SIGN_IN_POSTS.has(pathOf(request))) return undefined;
  const { session } = contextOf(request);
  const body = request.body as Record<string, unknown> | null | undefined;
  const given = body?._csrf;
  if (session === undefined || typeof given !== 'string' || !safeEqual(given, session.csrf)) return 'csrf';
  return undefined;
}

/** The admin key, exactly; compared in constant time. */
export function isAdminKey(given: unknown, adminKey: string): boolean {
  return typeof given === 'string' && given !== '' && safeEqual(given, adminKey);
}
