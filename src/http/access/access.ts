import { PERMISSIONS, type Permission } from '../../domain/operators/roles.js';

/**
 * Who may call a route. Every route declares it in its config where it is registered
 * (`{ config: { access: ACCESS.order } }`); one hook checks it from the matched route
 * (enforce.ts), never from the URL's text, so no other spelling of a path reaches a route past its
 * check. The listener a route is served on follows from the same declaration.
 */
export type Access =
  /** Anyone: health, the JWKS, the API reference, the token endpoint (which checks its own client). */
  | { readonly who: 'public' }
  /** An app token holding `scope`, and a fresh nonce (DOMAIN.md §2). */
  | { readonly who: 'app'; readonly scope: 'auth_order' | 'auth_webhooks' }
  /**
   * An app token with `auth_runtime` and a nonce; a user token, when sent, names the lease's
   * holder. `replayable`: a replay can do nothing the token's holder could not do anyway (a
   * heartbeat extends, a check-out resumes the machine's lease, a check-in ends an ended lease), so
   * the nonce is optional and not recorded: a fleet's calls cost no row each (DOMAIN.md §12).
   */
  | { readonly who: 'runtime'; readonly replayable?: true }
  /** An app token with `auth_me`, a nonce and a member's user token of that app. */
  | { readonly who: 'member' }
  /**
   * The admin API the CLI calls: an operator's personal token whose role holds `permission`, or
   * the admin key (which holds every one).
   */
  | { readonly who: 'admin'; readonly permission: Permission }
  /** The metrics token when one is set. */
  | { readonly who: 'metrics' }
  /** Console pages anyone may open: the front page and the enterprise administrator's sign-in. */
  | { readonly who: 'console-public' }
  /** What every console page loads, the operator's too: its assets and the language switch. */
  | { readonly who: 'console-shared' }
  /** The operator's sign-in page: anyone, but only where the operator's console is served. */
  | { readonly who: 'operator-sign-in' }
  /** Any console session, of either kind (sign-out). */
  | { readonly who: 'console-session' }
  /** An enterprise administrator's console session. */
  | { readonly who: 'enterprise-session' }
  /**
   * An operator's console session whose role holds `permission`. Until its sign-in is complete
   * (a second factor, a new password, an enrolment the owner requires) only the pages of those
   * steps, which declare `duringSignIn`, are open to it.
   */
  | { readonly who: 'operator-session'; readonly permission: Permission; readonly duringSignIn?: true };

export type Who = Access['who'];

/** The declarations routes use: one name per kind of caller. */
export const ACCESS = {
  public: { who: 'public' },
  order: { who: 'app', scope: 'auth_order' },
  webhooks: { who: 'app', scope: 'auth_webhooks' },
  runtime: { who: 'runtime' },
  runtimeReplayable: { who: 'runtime', replayable: true },
  member: { who: 'member' },
  metrics: { who: 'metrics' },
  consolePublic: { who: 'console-public' },
  consoleShared: { who: 'console-shared' },
  operatorSignIn: { who: 'operator-sign-in' },
  consoleSession: { who: 'console-session' },
  enterpriseSession: { who: 'enterprise-session' },
} as const satisfies Record<string, Access>;

/** An admin API route, for operators whose role holds `permission` (and the admin key). */
export const adminMay = (permission: Permission) => ({ who: 'admin', permission }) as const satisfies Access;

/** An operator console page or action, for sessions whose role holds `permission`. */
export const operatorMay = (permission: Permission) =>
  ({ who: 'operator-session', permission }) as const satisfies Access;

/** A page of the sign-in's own steps: open to an operator session that still owes one. */
export const operatorSignInStep = () =>
  ({ who: 'operator-session', permission: 'self', duringSignIn: true }) as const satisfies Access;

const WHO: ReadonlySet<string> = new Set<Who>([
  'public',
  'app',
  'runtime',
  'member',
  'admin',
  'metrics',
  'console-public',
  'console-shared',
  'operator-sign-in',
  'console-session',
  'enterprise-session',
  'operator-session',
]);

const APP_SCOPES: ReadonlySet<string> = new Set(['auth_order', 'auth_webhooks']);

/** A declaration as registration finds it: anything else stops the server from starting. */
export function isAccess(value: unknown): value is Access {
  if (typeof value !== 'object' || value === null) return false;
  const who = (value as { who?: unknown }).who;
  if (typeof who !== 'string' || !WHO.has(who)) return false;
  if (who === 'app') return APP_SCOPES.has(String((value as { scope?: unknown }).scope));
  if (who === 'admin' || who === 'operator-session') {
    const permission = (value as { permission?: unknown }).permission;
    return typeof permission === 'string' && (PERMISSIONS as readonly string[]).includes(permission);
  }
  return true;
}

export type Listener = 'public' | 'admin';

/**
 * Where a route is served when the admin API has a listener of its own (ADMIN_PORT, or a public
 * HOST): the operator's surfaces there alone, the rest on the public one alone, and the console's
 * shared pieces (its assets, the language switch, sign-out) on both.
 */
export function listenersOf(access: Access): readonly Listener[] {
  switch (access.who) {
    case 'admin':
    case 'operator-sign-in':
    case 'operator-session':
    case 'metrics':
      return ['admin'];
    case 'console-shared':
    case 'console-session':
      return ['public', 'admin'];
    case 'public':
    case 'console-public':
    case 'app':
    case 'runtime':
    case 'member':
    case 'enterprise-session':
      return ['public'];
  }
}

/**
 * Console routes that change state with a session take the session's CSRF token; sign-in forms,
 * posted before any session exists, rely on the origin check alone.
 */
export function needsCsrfToken(access: Access): boolean {
  return (
    access.who === 'console-session' ||
    access.who === 'enterprise-session' ||
    access.who === 'operator-session'
  );
}

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}
