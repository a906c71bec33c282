import type { ComponentChildren } from 'preact';
import type { ConsoleContext } from './context.js';
import type { MessageKey } from './i18n/index.js';
import { LOCALES } from './i18n/index.js';

const OPERATOR_NAV: Array<[string, MessageKey]> = [
  ['/console/operator', 'nav.dashboard'],
  ['/console/operator/apps', 'nav.apps'],
  ['/console/operator/enterprises', 'nav.enterprises'],
  ['/console/operator/orders', 'nav.orders'],
  ['/console/operator/leases', 'nav.leases'],
  ['/console/operator/offline-machines', 'nav.offlineMachines'],
  ['/console/operator/webhooks', 'nav.webhooks'],
  ['/console/operator/audit', 'nav.audit'],
];

const ENTERPRISE_NAV: Array<[string, MessageKey]> = [
  ['/console/enterprise', 'nav.members'],
  ['/console/enterprise/assets', 'nav.assets'],
  ['/console/enterprise/lent-locks', 'nav.lentLocks'],
  ['/console/enterprise/offline-machines', 'nav.offlineMachines'],
];

const LANGUAGE_NAMES: Record<(typeof LOCALES)[number], string> = { en: 'English', 'zh-CN': '简体中文' };

/** The frame of every page: header with navigation, language switch and sign-out, then the page. */
export function Layout(props: { context: ConsoleContext; title: string; children: ComponentChildren }) {
  const { context, title, children } = props;
  const { t, session, locale, path } = context;
  const nav =
    session?.kind === 'operator' ? OPERATOR_NAV : session?.kind === 'enterprise' ? ENTERPRISE_NAV : [];
  const current = path.split('?')[0];
  return (
    <html lang={locale}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · ${t('app.name')}`}</title>
        {/* No favicon request: the console has no icon of its own yet. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer />
      </head>
      <body>
        <header>
          <nav>
            <strong class="brand">{t('app.name')}</strong>
            {nav.map(([href, key]) => (
              <a href={href} aria-current={current === href ? 'page' : undefined}>
                {t(key)}
              </a>
            ))}
            <a href="/docs">{t('nav.docs')}</a>
          </nav>
          <div class="toolbar">
            <form method="get" action="/console/language" class="inline">
              <input type="hidden" name="back" value={path} />
              <label>
                {t('nav.language')}{' '}
                <select name="lang" data-autosubmit>
                  {LOCALES.map((code) => (
                    <option value={code} selected={code === locale}>
                      {LANGUAGE_NAMES[code]}
                    </option>
                  ))}
                </select>
              </label>
              <noscript>
                <button type="submit">OK</button>
              </noscript>
            </form>
            {session !== undefined && (
              <form method="post" action="/console/sign-out" class="inline">
                <input type="hidden" name="_csrf" value={session.csrf} />
                <span class="who">
                  {session.kind === 'enterprise' ? session.member.account : t('signIn.operator')}
                </span>{' '}
                <button type="submit" class="secondary">
                  {t('nav.signOut')}
                </button>
              </form>
            )}
          </div>
          <h1>{title}</h1>
        </header>
        <main>{children}</main>
      </body>
    </html>
  );
}
