import type { App } from '../app-type.js';
import { contextOf } from './context.js';
import { isLocale } from './i18n/index.js';
import { Layout } from './layout.js';
import { redirectTo, sendPage } from './render.js';
import { ACCESS } from '../access/access.js';

/** GET /console: the signed-in area, or a choice of the two sign-ins. */
export function landingRoute(app: App): void {
  app.get('/', { config: { access: ACCESS.consolePublic } }, async (request, reply) => {
    const context = contextOf(request);
    if (context.session?.kind === 'operator') return redirectTo(reply, '/console/operator');
    if (context.session?.kind === 'enterprise') return redirectTo(reply, '/console/enterprise');
    const { t } = context;
    return sendPage(
      reply,
      <Layout context={context} title={t('app.name')}>
        <div class="sign-in">
          <section class="card">
            <h2>{t('signIn.enterprise')}</h2>
            <p>{t('signIn.enterpriseHint')}</p>
            <p>
              <a href="/console/sign-in">{t('signIn.submit')}</a>
            </p>
          </section>
          <section class="card">
            <h2>{t('signIn.operator')}</h2>
            <p>{t('landing.operatorHint')}</p>
            <p>
              <a href="/console/operator/sign-in">{t('signIn.submit')}</a>
            </p>
          </section>
          <section class="card">
            <h2>{t('nav.docs')}</h2>
            <p>{t('landing.docsHint')}</p>
            <p>
              <a href="/docs">/docs</a>
            </p>
          </section>
        </div>
      </Layout>,
    );
  });
}

/**
 * GET /console/language?lang=zh-CN&back=/console/…: keeps the choice in a cookie and goes back.
 * Only a console path is gone back to, so the link cannot send anyone elsewhere.
 */
export function languageRoute(app: App): void {
  app.get<{ Querystring: { lang?: string; back?: string } }>(
    '/language',
    { config: { access: ACCESS.consoleShared } },
    async (request, reply) => {
      const { lang, back } = request.query;
      if (isLocale(lang)) {
        reply.setCookie('keyward_lang', lang, {
          path: '/',
          sameSite: 'lax',
          httpOnly: true,
          maxAge: 365 * 24 * 3600,
        });
      }
      const safeBack =
        typeof back === 'string' && /^\/console(\/|\?|$)/.test(back) && !back.startsWith('//')
          ? back
          : '/console';
      return redirectTo(reply, safeBack);
    },
  );
}
