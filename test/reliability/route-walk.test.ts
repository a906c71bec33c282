import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { Access } from '../../src/http/access/access.js';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/access/enforce.js';
import { ADMIN_KEY, startIsolatedHarness, type Harness } from '../support/harness.js';
import { TEST_ENV } from '../support/test-env.js';
import { spellingsOf } from './support/path-spellings.js';
import { buildWalkWorld, walkState, type WalkWorld } from './support/route-walk-world.js';
import { changedTables, type TenantState } from './support/tenant-state.js';

// Every registered route, found from the server itself (a route added later is walked without
// anyone listing it), under many spellings of its path, called by everyone who must not pass its
// declared access: none is carried out, none answers another tenant's data, none answers 500.

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;
type CallerName = 'none' | 'plainMember' | 'otherAdmin' | 'wrongScope';
const CALLERS: CallerName[] = ['none', 'plainMember', 'otherAdmin', 'wrongScope'];

/**
 * What a caller's attempt on a route must come to: refused outright; or, for a caller who holds
 * the route's kind of credential for another tenant, answered without the victim's data; or, on a
 * public route, answered (never with a 500), the victim's own people seeing their own data; or not
 * tried, where the caller acts in its own right on its own data (the victim's own administrator).
 */
type Expect = 'refuse' | 'no-leak' | 'answer' | 'skip';

let h: Harness;
let world: WalkWorld;
let before: TenantState;
let routes: DeclaredRoute[];

const METRICS_TOKEN = 'walk-metrics-token-0123456789abcdef';

beforeAll(async () => {
  // On PostgreSQL, a database of its own: the walk asserts that nothing of A's changed over some
  // minutes of calls, and other files' servers on the shared database (their housekeeping, their
  // workers) must not be able to move a row it watches.
  h = await startIsolatedHarness({ METRICS_TOKEN });
  world = await buildWalkWorld(h);
  routes = declaredRoutes(h.app);
  before = await walkState(h, world);
}, 180_000);
afterAll(async () => h.close());

function expectationOf(caller: CallerName, access: Access): Expect {
  const open =
    access.who === 'public' ||
    access.who === 'console-public' ||
    access.who === 'console-shared' ||
    access.who === 'operator-sign-in';
  if (open) return caller === 'none' || caller === 'otherAdmin' ? 'no-leak' : 'answer';
  switch (caller) {
    case 'none':
      return 'refuse';
    case 'plainMember':
      // A member of the victim's enterprise, through the victim's app: a member-center caller in
      // its own right (what it may do there is the operation's rule, tested with each operation).
      return access.who === 'member' ? 'skip' : 'refuse';
    case 'otherAdmin':
      return access.who === 'app' ||
        access.who === 'runtime' ||
        access.who === 'member' ||
        access.who === 'enterprise-session'
        ? 'no-leak'
        : access.who === 'console-session'
          ? 'skip'
          : 'refuse';
    case 'wrongScope':
      // The victim's own administrator, in his own console: his to change.
      return access.who === 'enterprise-session' || access.who === 'console-session' ? 'skip' : 'refuse';
  }
}

/** A path with every parameter filled from the victim's objects (an unknown one with a made-up id). */
function pathOf(route: DeclaredRoute): string {
  return route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => world.params[name] ?? 'x1walk');
}

function requestOf(caller: CallerName, route: DeclaredRoute) {
  const credentials = world.callers[caller](route.access);
  const form = route.method === 'POST' && route.url.startsWith('/console');
  return {
    // An address of its own: the walk's wrong admin keys spend this address's budget, no one else's.
    remoteAddress: WALK_ADDRESS,
    headers: {
      ...credentials.headers,
      ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
    },
    ...(form
      ? {
          payload: new URLSearchParams(
            credentials.csrf === undefined ? {} : { _csrf: credentials.csrf },
          ).toString(),
        }
      : route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH'
        ? { payload: {} }
        : {}),
  };
}

const WALK_ADDRESS = '192.0.2.77';

const SIGN_IN = /^\/console(\/operator)?\/sign-in(\?|$)/;

/** The envelope's code, where the answer has a body (HEAD has none). */
function codeOf(response: Reply): unknown {
  try {
    return (JSON.parse(response.body) as { code?: unknown }).code;
  } catch {
    return undefined;
  }
}

function refused(response: Reply): boolean {
  if ([401, 403, 404, 405, 429].includes(response.statusCode)) return true;
  if (response.statusCode === 303 || response.statusCode === 302) {
    return SIGN_IN.test(String(response.headers.location ?? ''));
  }
  if (response.statusCode === 299) {
    const code = codeOf(response);
    return code !== 0 && code !== '0' && code !== '500';
  }
  return false;
}

function internalError(response: Reply): boolean {
  if (response.statusCode === 500) return true;
  if (response.statusCode !== 299) return false;
  return codeOf(response) === '500';
}

/** A secret of the victim's in the answer that the caller did not send itself (a path's id is echoed). */
function leaked(response: Reply, path: string): string | undefined {
  const sent = decodeURIComponent(path.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')).toLowerCase();
  return world.secrets.find(
    (secret) => response.body.includes(secret) && !sent.includes(secret.toLowerCase()),
  );
}

describe('the route walk', () => {
  it('finds every surface among the registered routes', () => {
    const whos = new Set(routes.map((r) => r.access.who));
    for (const who of [
      'public',
      'app',
      'runtime',
      'member',
      'admin',
      'metrics',
      'console-public',
      'operator-sign-in',
      'console-session',
      'enterprise-session',
      'operator-session',
    ]) {
      expect(whos, who).toContain(who);
    }
    const urls = routes.map((r) => `${r.method} ${r.url}`);
    for (const known of [
      'GET /console/operator/audit.csv',
      'POST /console/operator/apps/:appKey/disable',
      'POST /admin/apps/:appKey/disable',
      'POST /runtime/v1/leases/:leaseId/check-in',
      'DELETE /v1/webhooks/endpoints/:endpointId',
      'GET /docs/json',
    ]) {
      expect(urls).toContain(known);
    }
  });

  it(
    'lets no caller past a route it may not call, under any spelling of the path',
    { timeout: 600_000 },
    async () => {
      const failures: string[] = [];
      let calls = 0;
      for (const route of routes) {
        const spellings = spellingsOf(pathOf(route));
        for (const caller of CALLERS) {
          const expectation = expectationOf(caller, route.access);
          if (expectation === 'skip') continue;
          for (const path of spellings) {
            const response = await h.app.inject({
              method: route.method as 'GET',
              url: path,
              ...requestOf(caller, route),
            });
            calls += 1;
            const where = `${caller} ${route.method} ${path} (${route.access.who}) → ${response.statusCode}`;
            if (internalError(response)) failures.push(`500: ${where}`);
            // A's own people see A's name in their own pages' frame: the leak is to outsiders.
            const outsider = caller === 'none' || caller === 'otherAdmin';
            const secret = outsider ? leaked(response, path) : undefined;
            if (secret !== undefined) failures.push(`leaked ${secret}: ${where}`);
            if (expectation === 'refuse' && !refused(response)) {
              failures.push(`not refused: ${where} ${response.body.slice(0, 120)}`);
            }
          }
        }
      }
      expect(failures.slice(0, 40)).toEqual([]);
      expect(calls).toBeGreaterThan(routes.length * 10);
      // Nothing of the victim's, nor the platform's console client, changed.
      expect(changedTables(before, await walkState(h, world))).toEqual([]);
    },
  );
});

describe('the public listener when the operator surfaces have their own (ADMIN_PORT)', () => {
  it(
    'answers every spelling of an operator route as an unknown path, to every caller, the operator too',
    { timeout: 600_000 },
    async () => {
      const config = loadConfig({
        DATA_DIR: '/nonexistent-test-data',
        ...TEST_ENV,
        ADMIN_PORT: '0',
        METRICS_TOKEN,
      });
      const apart = await buildApp({ config, db: h.database.db, adminKey: ADMIN_KEY });
      await apart.ready();
      try {
        const operatorCookie = `keyward_session=${await apart.services.consoleSessions.openOperator({
          requestId: 'walk',
          clientRequestId: null,
        })}`;
        const operatorOnly = declaredRoutes(apart).filter(
          (r) =>
            r.access.who === 'admin' ||
            r.access.who === 'operator-session' ||
            r.access.who === 'operator-sign-in' ||
            r.access.who === 'metrics',
        );
        expect(operatorOnly.length).toBeGreaterThan(30);
        const failures: string[] = [];
        const asOperator = {
          authorization: `Bearer ${ADMIN_KEY}`,
          cookie: operatorCookie,
        };
        for (const route of operatorOnly) {
          for (const path of spellingsOf(pathOf(route))) {
            for (const headers of [asOperator, { authorization: `Bearer ${METRICS_TOKEN}` }, {}]) {
              const response = await apart.inject({ method: route.method as 'GET', url: path, headers });
              if (response.statusCode !== 404)
                failures.push(`${route.method} ${path} → ${response.statusCode}`);
            }
          }
        }
        expect(failures.slice(0, 40)).toEqual([]);
      } finally {
        await apart.close();
      }
    },
  );
});
