import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/access/enforce.js';
import { fieldPath } from '../../src/http/validation.js';
import { startHarness, type Harness } from '../support/harness.js';
import { adminRequests, fieldNamesOf, type AdminFuzzSetup } from './support/admin-requests.js';
import { buildAdminWorld, type AdminWorld } from './support/admin-world.js';
import { FUZZ_RUNS, type FuzzRequest } from './support/fuzz-request.js';
import { changedTables } from './support/tenant-state.js';

// Generated calls of every admin API route, found from the server's declared routes (a route
// added later is fuzzed without anyone listing it), made with an owner's personal token so that
// each gets past the guard: never a 5xx, every refusal in the admin API's shape ({ error }), a
// validation error naming the field, and a refused call leaves the targeted data as it was.

const BODY_LIMIT = 256 * 1024;
/** The admin API has some forty routes: a fifth of the other fuzzers' runs each keeps it to seconds. */
const RUNS = Math.max(20, Math.round(FUZZ_RUNS / 5));
/** Fewer routes than this found means the discovery broke, not that the API shrank. */
const ROUTES_AT_LEAST = 30;

let h: Harness;
let world: AdminWorld;
let setup: AdminFuzzSetup;
let routes: DeclaredRoute[];
let left: DeclaredRoute[];

beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  world = await buildAdminWorld(h);
  // The fuzzer's own token, never the admin key: the key's acts are audited without an operator,
  // and the fuzzer's audit rows are how a write anywhere shows itself.
  setup = {
    headers: { authorization: `Bearer ${world.token}` },
    pathValues: world.pathValues,
    hints: world.hints,
    bodyLimitBytes: BODY_LIMIT,
  };
  const admin = declaredRoutes(h.app).filter((r) => r.access.who === 'admin' && r.method !== 'HEAD');
  // A write declared to act on the whole platform at once (rotating the runtime's signing key, the
  // rule every operator signs in under, a backup of every table) is left out: its success is not
  // scoped to the fuzz's objects, so on a shared database it would change what other tests stand
  // on, and a backup per valid call would take the run's whole time.
  const wholePlatform = (r: DeclaredRoute) => r.method !== 'GET' && r.effect === 'whole-platform';
  routes = admin.filter((r) => !wholePlatform(r));
  left = admin.filter(wholePlatform);
}, 120_000);
afterAll(async () => h.close());

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

const REQUEST_PARTS = new Set(['body', 'querystring', 'params', 'path']);

/**
 * Refusals for the state of the object a well-formed request names, not for a field of it: they
 * name no field, and are the only 400s that may not (the fuzz disables the apps it approves).
 */
const STATE_REFUSALS = [/^a disabled application cannot be approved/];

/**
 * Whether a message opens with the field `name` or a place inside it (`limit[]` holds
 * `limit[][0]`), as `name: …`. Names are matched whole, not parsed: a sent name may hold spaces.
 */
const opensWith = (message: string, name: string) =>
  name !== '' && [': ', '.', '['].some((next) => message.startsWith(`${name}${next}`));

/** The names a request's body sends: JSON's, or a form's (the console's parser serves every route). */
function sentBodyNames(request: FuzzRequest): string[] {
  const payload = request.payload ?? '';
  if (request.headers['content-type'] === 'application/x-www-form-urlencoded') {
    return [...new URLSearchParams(payload).keys()];
  }
  try {
    const body: unknown = JSON.parse(payload);
    return body !== null && typeof body === 'object' ? Object.keys(body) : [];
  } catch {
    return [];
  }
}

/**
 * Names the route's schema gives, and those the request itself sent (a field that is not
 * allowed), each also as a message spells it (`0` as `[0]`).
 */
function namesOf(route: DeclaredRoute, request: FuzzRequest): Set<string> {
  const sent = [...new URL(request.url, 'http://x').searchParams.keys(), ...sentBodyNames(request)];
  const names = [...fieldNamesOf(route), ...sent];
  return new Set([...names, ...names.map((name) => fieldPath(`/${name}`))]);
}

/** Whether URL parsing resolved a dot segment away: the request then names another path. */
function climbed(url: string): boolean {
  const path = url.split('?')[0] ?? '';
  return new URL(path, 'http://x').pathname !== path;
}

/** Checks one answer; returns whether it was a refusal. */
function check(route: DeclaredRoute, request: FuzzRequest, reply: Reply): boolean {
  const where = `${reply.statusCode} ${reply.body.slice(0, 300)}\n${request.method} ${request.url.slice(0, 300)} ${request.payload?.slice(0, 200) ?? ''}`;
  expect(reply.statusCode, where).toBeLessThan(500);
  expect(reply.body, where).not.toContain('    at ');
  if (reply.statusCode < 300) return false;
  expect(reply.statusCode, where).toBeGreaterThanOrEqual(400);
  const body = reply.json<Record<string, unknown>>();
  if (climbed(request.url) && 'code' in body) {
    // A dot segment took the path to one no admin route has: answered as on the public listener,
    // which is how the CLI tells an admin listener from a public one (src/cli/admin-client.ts).
    expect([404, 405], where).toContain(reply.statusCode);
    expect(body, where).toMatchObject({ code: String(reply.statusCode) });
    return true;
  }
  expect(Object.keys(body), where).toEqual(['error']);
  expect(typeof body.error === 'string' && body.error !== '', where).toBe(true);
  const error = String(body.error);
  if (reply.statusCode === 400 && !climbed(request.url) && !STATE_REFUSALS.some((r) => r.test(error))) {
    const names = [...REQUEST_PARTS, ...namesOf(route, request)];
    const named = names.some((name) => opensWith(error, name));
    expect(named, `a validation error names a field of the route's or the request's: ${where}`).toBe(true);
  }
  return true;
}

interface Tally {
  runs: number;
  byStatus: Map<number, number>;
}

async function fuzzRoute(route: DeclaredRoute, tally: Tally): Promise<void> {
  let last = await world.state();
  await fc.assert(
    fc.asyncProperty(adminRequests(route, setup), async (request) => {
      const reply = await h.app.inject(request);
      const refused = check(route, request, reply);
      const now = await world.state();
      if (refused) {
        const where = `${reply.statusCode} ${reply.body.slice(0, 200)}: ${request.method} ${request.url.slice(0, 200)}`;
        expect(changedTables(last, now), `a refusal changed data: ${where}`).toEqual([]);
      }
      last = now;
      tally.runs += 1;
      tally.byStatus.set(reply.statusCode, (tally.byStatus.get(reply.statusCode) ?? 0) + 1);
    }),
    { numRuns: RUNS },
  );
}

/** fast-check's report, cut to the counterexample's start and the assertion that failed. */
function failureOf(error: unknown): string {
  const report = String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : '';
  return `${report.slice(0, 600)}\n… ${cause.slice(0, 800)}`;
}

describe('generated bad input on the admin API', () => {
  it('finds the admin routes among those the server declares', () => {
    expect(routes.length).toBeGreaterThan(ROUTES_AT_LEAST);
    for (const route of routes) expect(route.url).toMatch(/^\/admin\//);
    // Only the few whole-platform writes are left out, never a reading route.
    expect(left.length).toBeLessThan(routes.length / 5);
  });

  it(
    'answers every generated call below 500 in its shape, and a refused one changes nothing',
    { timeout: 120_000 + RUNS * 4_000 },
    async () => {
      const failures: string[] = [];
      const tally: Tally = { runs: 0, byStatus: new Map() };
      for (const route of routes) {
        try {
          await fuzzRoute(route, tally);
        } catch (error) {
          failures.push(`${route.method} ${route.url}: ${failureOf(error)}`);
        }
      }
      expect(failures).toEqual([]);
      expect(tally.runs).toBe(routes.length * RUNS);
      // The generator gets past validation into the services, and often fails validation too.
      expect(tally.byStatus.get(200) ?? 0).toBeGreaterThan(tally.runs / 10);
      expect(tally.byStatus.get(400) ?? 0).toBeGreaterThan(tally.runs / 5);
    },
  );
});
