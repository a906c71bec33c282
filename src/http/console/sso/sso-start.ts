import type { App } from '../../app-type.js';
import { ACCESS } from '../../access/access.js';
import { setSsoCookie } from './sso-cookie.js';
import { sendProviderFailure, sendSsoLimited, sendSsoNotConfigured } from './sso-page.js';

/**
 * GET /console/operator/sso: starts a sign-in at the provider. A GET, as a link on the sign-in
 * page: it changes nothing an attacker could want (a row that expires, a cookie of this browser's),
 * and the rows anyone can make this way are bounded (SsoStartLimits).
 */
export function ssoStartRoute(app: App): void {
  app.get('/operator/sso', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) => {
    const sso = app.services.sso;
    if (sso === undefined) return sendSsoNotConfigured(request, reply);
    const started = await sso.start(request.ip);
    if (started.status === 'provider') return sendProviderFailure(request, reply, started.error);
    if (started.status === 'limited') return sendSsoLimited(request, reply, started);
    setSsoCookie(request, reply, app.config, started.browserSecret);
    return reply.code(303).header('location', started.url).header('cache-control', 'no-store').send();
  });
}
