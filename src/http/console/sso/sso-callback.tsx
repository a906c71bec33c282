import { requestIdsOf } from '../../audit-actor.js';
import type { App } from '../../app-type.js';
import { ACCESS } from '../../access/access.js';
import { contextOf } from '../context.js';
import { Layout } from '../layout.js';
import { sendPage } from '../render.js';
import { setSessionCookie } from '../session.js';
import { clearSsoCookie, ssoSecretOf } from './sso-cookie.js';
import { sendProviderFailure, sendSsoNotConfigured, sendSsoRefusal } from './sso-page.js';

const CONSOLE_HOME = '/console/operator';

/**
 * GET /console/operator/sso/callback: the provider sends the browser back here with a code. The
 * sign-in it started is taken once, the code exchanged, and the operator signed in.
 */
export function ssoCallbackRoute(app: App): void {
  app.get('/operator/sso/callback', { config: { access: ACCESS.operatorSignIn } }, async (request, reply) => {
    const sso = app.services.sso;
    if (sso === undefined) return sendSsoNotConfigured(request, reply);
    const at = request.url.indexOf('?');
    const query = at === -1 ? '' : request.url.slice(at + 1);
    const browserSecret = ssoSecretOf(request);
    // Good for one return only, whatever comes of it.
    clearSsoCookie(request, reply, app.config);
    const outcome = await sso.finish(query, browserSecret, requestIdsOf(request));
    if (outcome.status === 'refused') return sendSsoRefusal(request, reply, outcome.reason);
    if (outcome.status === 'provider') return sendProviderFailure(request, reply, outcome.error);
    setSessionCookie(request, reply, app.config, outcome.secret);
    // A page that moves on by itself rather than a redirect: this request came from the provider's
    // site, and a browser does not send the SameSite=Strict session cookie on a redirect that
    // continues a cross-site navigation. The Refresh is this page's own, same-site navigation.
    const context = contextOf(request);
    const { t } = context;
    reply.header('refresh', `0; url=${CONSOLE_HOME}`);
    return sendPage(
      reply,
      <Layout context={context} title={t('sso.title')}>
        <p class="notice done" role="status">
          {t('sso.signedIn', { name: outcome.operator.name })}
        </p>
        <p>
          <a href={CONSOLE_HOME}>{t('sso.continue')}</a>
        </p>
      </Layout>,
    );
  });
}
