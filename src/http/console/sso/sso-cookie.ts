import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../../config.js';
import { SSO_REQUEST_SECONDS } from '../../../domain/sso/sso.service.js';

/**
 * Binds a sign-in at the provider to the browser that started it: the state in the provider's
 * redirect is only taken with this cookie's secret (login CSRF: someone else's finished sign-in
 * pasted into your browser finds nothing). SameSite=Lax, not the session's Strict: the browser
 * comes back from the provider's site, a cross-site navigation Strict cookies are not sent on.
 */
export const SSO_COOKIE = 'keyward_sso';
const COOKIE_PATH = '/console/operator/sso';

const options = (request: FastifyRequest, config: Config) => ({
  path: COOKIE_PATH,
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: config.cookieSecure || request.protocol === 'https',
});

export function setSsoCookie(
  request: FastifyRequest,
  reply: FastifyReply,
  config: Config,
  secret: string,
): void {
  reply.setCookie(SSO_COOKIE, secret, { ...options(request, config), maxAge: SSO_REQUEST_SECONDS });
}

export function clearSsoCookie(request: FastifyRequest, reply: FastifyReply, config: Config): void {
  reply.clearCookie(SSO_COOKIE, options(request, config));
}

export function ssoSecretOf(request: FastifyRequest): string | undefined {
  const secret = request.cookies[SSO_COOKIE];
  return typeof secret === 'string' && /^[A-Za-z0-9_-]{20,100}$/.test(secret) ? secret : undefined;
}
