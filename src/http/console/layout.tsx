import type { ComponentChildren } from 'preact';
import type { ConsoleSession } from '../../domain/console/console-sessions.service.js';
import { mayAct, type Permission } from '../../domain/operators/roles.js';
import type { ConsoleContext } from './context.js';
import type { MessageKey } from './i18n/index.js';
import { LOCALES } from './i18n/index.js';

/** Each operator page with the permission its route declares: a role sees what it may open. */
const OPERATOR_NAV: Array<[string, MessageKey, Permission]> = [
  ['/console/operator', 'nav.dashboard', 'status'],
  ['/console/operator/apps', 'nav.apps', 'read'],
  ['/console/operator/enterprises', 'nav.enterprises', 'read'],
  ['/console/operator/orders', 'nav.orders', 'read'],
  ['/console/operator/leases', 'nav.leases', 'read'],
  ['/console/operator/offline-machines', 'nav.offlineMachines', 'read'],
  ['/console/operator/relays', 'nav.relays', 'read'],
  ['/console/operator/webhooks', 'nav.webhooks', 'read'],
  ['/console/operator/audit', 'nav.audit', 'audit'],
  ['/console/operator/usage', 'nav.usage', 'usage'],
  ['/console/operator/operators', 'nav.operators', 'operators'],
  ['/console/operator/account', 'nav.account', 'self'],
];

/** The operator's entries their role reaches, none while the sign-in still owes a step. */
function operatorNav(session: Extract<ConsoleSession, { kind: 'operator' }>): Array<[string, MessageKey]> {
  if (session.step !== 'ready') return [];
  return OPERATOR_NAV.filter(([, , p]) => mayAct([session.operator.role], p)).map(([href, key]) => [
    href,
    key,
  ]);
}

const ENTERPRISE_NAV: Array<[string, MessageKey]> = [
  ['/console/enterprise', 'nav.members'],
  ['/console/enterprise/assets', 'nav.assets'],
  ['/console/enterprise/lent-locks', 'nav.lentLocks'],
  ['/console/enterprise/offline-machines', 'nav.offlineMachines'],
  ['/console/enterprise/relays', 'nav.relays'],
  ['/console/enterprise/usage', 'nav.usage'],
];

const LANGUAGE_NAMES: Record<(typeof LOCALES)[number], string> = { en: 'English', 'zh-CN': '简体中文' };

/**
 * The nav entry a page belongs to: its own path, else the longest entry its path lies under (an
 * enterprise's page is under Enterprises). The area's root matches only itself, or every page
 * would be under it.
 */
function currentEntry(nav: Array<[string, MessageKey]>, path: string): string | undefined {
  const here = path.split('?')[0] ?? path;
  const roots = new Set(['/console/operator', '/console/enterprise']);
  let best: string | undefined;
  for (const [href] of nav) {
    const under = here === href || (!roots.has(href) && here.startsWith(`${href}/`));
    if (under && (best === undefined || href.length > best.length)) best = href;
  }
  return best;
}

/** The page's title in the tab: the page, then the product, never the product twice. */
export function documentTitle(title: string, product: string): string {
  return title === product ? product : `${title} · ${product}`;
}

/**
 * The side bar's search: any identifier the operator is handed (asset or lock number, lease, order,
 * app key, enterprise name or code, member account) opens its page (operator/search.tsx).
 */
function SearchBox(props: { context: ConsoleContext }) {
  const { t } = props.context;
  return (
    <form method="get" action="/console/operator/search" class="sidebar-search" role="search">
      <input
        type="search"
        name="q"
        maxLength={200}
        placeholder={t('search.placeholder')}
        aria-label={t('search.label')}
        title={t('search.what')}
      />
    </form>
  );
}

function LanguageSwitch(props: { context: ConsoleContext }) {
  const { t, locale, path } = props.context;
  return (
    <form method="get" action="/console/language" class="inline language">
      <input type="hidden" name="back" value={path} />
      <label>
        <span class="visually-hidden">{t('nav.language')}</span>
        <select name="lang" data-autosubmit aria-label={t('nav.language')}>
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
  );
}

/**
 * The frame of every page: a side bar with the brand, the area's navigation (one entry a line, so
 * it never wraps however many entries the areas gain), the language and who is signed in; then the
 * page's title and the page. On a narrow screen the side bar becomes a band at the top whose
 * entries scroll sideways (console.css).
 */
export function Layout(props: { context: ConsoleContext; title: string; children: ComponentChildren }) {
  const { context, title, children } = props;
  const { t, session, locale, path } = context;
  const nav =
    session?.kind === 'operator'
      ? operatorNav(session)
      : session?.kind === 'enterprise'
        ? ENTERPRISE_NAV
        : [];
  const current = currentEntry(nav, path);
  const product = t('app.name');
  return (
    <html lang={locale}>
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{documentTitle(title, product)}</title>
        <link rel="icon" type="image/svg+xml" href="/console/assets/favicon.svg" />
        <link rel="stylesheet" href="/console/assets/console.css" />
        <script src="/console/assets/console.js" defer />
      </head>
      <body class={session === undefined ? 'signed-out' : 'signed-in'}>
        <aside class="sidebar">
          <a class="brand" href="/console">
            <span>{product}</span>
          </a>
          {session?.kind === 'operator' &&
            session.step === 'ready' &&
            mayAct([session.operator.role], 'read') && <SearchBox context={context} />}
          <nav class="main-nav" aria-label={product}>
            {nav.map(([href, key]) => (
              <a href={href} aria-current={current === href ? 'page' : undefined}>
                {t(key)}
              </a>
            ))}
            <a href="/docs" class="external">
              {t('nav.docs')}
            </a>
          </nav>
          <div class="toolbar">
            <LanguageSwitch context={context} />
            {session !== undefined && (
              <form method="post" action="/console/sign-out" class="inline sign-out">
                <input type="hidden" name="_csrf" value={session.csrf} />
                <span class="who">
                  {session.kind === 'enterprise' ? session.member.account : session.operator.name}
                </span>
                <button type="submit" class="secondary">
                  {t('nav.signOut')}
                </button>
              </form>
            )}
          </div>
        </aside>
        <div class="page">
          <header class="page-header">
            <h1>{title}</h1>
          </header>
          <main>{children}</main>
        </div>
      </body>
    </html>
  );
}
