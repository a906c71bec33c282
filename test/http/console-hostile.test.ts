import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleSurface } from '../../src/http/console/index.js';
import { FORM_LIMIT_BYTES, UPLOAD_LIMIT_BYTES } from '../../src/http/console/limits.js';
import { relayFormBodyLimit, type RelayFile } from '../../src/http/console/relays/relay-forms.js';
import { CONSOLE_PREFIX } from '../../src/http/surface.js';
import { enterpriseClient, operatorClient, type ConsoleClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  buyAsset,
  type AssetWorld,
  type MemberSession,
} from '../support/order-fixtures.js';

/** The Relays pages' forms by their path's last part, and the file each takes. */
const RELAY_FORMS: Partial<Record<string, RelayFile>> = {
  grant: 'request',
  report: 'report',
  return: 'return',
};

// Every console route, walked as an attacker would, so a page added later is reached without
// anyone remembering to list it: another tenant's ids, a post without the CSRF token, a body past
// the form limit, control characters.

interface ConsoleRoute {
  method: 'GET' | 'POST';
  url: string;
}

/** The console's routes as its plugin registers them (the same plugin buildApp registers). */
async function consoleRoutes(h: Harness): Promise<ConsoleRoute[]> {
  const found: ConsoleRoute[] = [];
  const probe = Fastify();
  probe.decorate('services', h.app.services);
  probe.decorate('config', h.app.config);
  probe.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method === 'GET') found.push({ method: 'GET', url: route.url });
      if (method === 'POST') found.push({ method: 'POST', url: route.url });
    }
  });
  await probe.register(consoleSurface(ADMIN_KEY), { prefix: CONSOLE_PREFIX });
  await probe.ready();
  await probe.close();
  return found;
}

const SIGN_IN_POSTS = new Set(['/console/sign-in', '/console/operator/sign-in']);
const isEnterprise = (url: string) => url.startsWith('/console/enterprise');
const isOperator = (url: string) => url.startsWith('/console/operator') && !SIGN_IN_POSTS.has(url);

let h: Harness;
let routes: ConsoleRoute[];
let attacker: AssetWorld;
let victim: AssetWorld;
let victimMember: MemberSession;
let victimAssetId: string;
let asAttacker: ConsoleClient;
let asOperator: ConsoleClient;

beforeAll(async () => {
  h = await startHarness();
  routes = await consoleRoutes(h);
  attacker = await assetWorld(h);
  victim = await assetWorld(h);
  victimMember = await addMember(victim);
  victimAssetId = await assetIdOf(victim, await buyAsset(victim));
  asAttacker = await enterpriseClient(h, attacker.admin.account, attacker.admin.password);
  asOperator = await operatorClient(h);
});
afterAll(async () => {
  await h?.close();
});

/** A route's URL with the victim's ids in its parameters. */
function withVictimIds(url: string): string {
  return url
    .replace(':memberGlobalId', encodeURIComponent(victimMember.globalId))
    .replace(':assetId', encodeURIComponent(victimAssetId))
    .replace(':globalId', encodeURIComponent(victim.enterpriseGlobalId))
    .replace(':appKey', encodeURIComponent(attacker.app.appKey))
    .replace(':name', 'console.css');
}

/** The victim's state an enterprise page could change: members, asset holders, audit rows. */
async function victimState(): Promise<string> {
  const members = await h.database.db
    .selectFrom('members as m')
    .innerJoin('enterprises as e', 'e.id', 'm.enterprise_id')
    .select(['m.account', 'm.name', 'm.deleted', 'm.password_hash'])
    .where('e.global_id', '=', victim.enterpriseGlobalId)
    .orderBy('m.id')
    .execute();
  const assignments = await h.database.db
    .selectFrom('asset_assignments')
    .select(['asset_id', 'member_id'])
    .where('asset_id', '=', victimAssetId)
    .execute();
  const audit = await h.app.services.audit.list({ enterprise: victim.enterpriseGlobalId, limit: 100 });
  return JSON.stringify({ members, assignments, audit: audit.length });
}

describe('every console route under attack', () => {
  it('finds the routes to walk', () => {
    expect(routes.filter((r) => r.method === 'POST').length).toBeGreaterThanOrEqual(15);
    expect(routes.some((r) => r.url.includes(':memberGlobalId'))).toBe(true);
  });

  it("answers another enterprise's ids with 404 on every enterprise page and action, changing nothing", async () => {
    const before = await victimState();
    const withIds = routes.filter((r) => isEnterprise(r.url) && r.url.includes(':'));
    expect(withIds.length).toBeGreaterThan(5);
    for (const route of withIds) {
      const url = withVictimIds(route.url);
      const answer =
        route.method === 'GET'
          ? await asAttacker.get(url)
          : await asAttacker.post(url, {
              name: 'taken over',
              password: 'Taken-over1',
              assetNum: victim.enterpriseGlobalId,
              assetIds: victimAssetId,
              lock: victimAssetId,
            });
      expect(answer.statusCode, `${route.method} ${route.url}`).toBe(404);
    }
    expect(await victimState()).toBe(before);
  });

  it('keeps an enterprise administrator out of every operator page, and the operator out of every enterprise page', async () => {
    for (const route of routes.filter((r) => isOperator(r.url))) {
      const url = withVictimIds(route.url);
      const answer = route.method === 'GET' ? await asAttacker.get(url) : await asAttacker.post(url, {});
      expect(answer.statusCode, `${route.method} ${route.url}`).toBe(404);
    }
    for (const route of routes.filter((r) => isEnterprise(r.url))) {
      const url = withVictimIds(route.url);
      const answer = route.method === 'GET' ? await asOperator.get(url) : await asOperator.post(url, {});
      expect(answer.statusCode, `${route.method} ${route.url}`).toBe(404);
    }
  });

  it('refuses every post without the CSRF token, or from another site, before it does anything', async () => {
    const before = await victimState();
    const posts = routes.filter((r) => r.method === 'POST' && !SIGN_IN_POSTS.has(r.url));
    for (const route of posts) {
      const client = isOperator(route.url) ? asOperator : asAttacker;
      const url = route.url.includes(':') ? withVictimIds(route.url) : route.url;
      const bare = await client.post(url, { name: 'x' }, { csrf: false });
      expect(bare.statusCode, `${route.url} without a token`).toBe(403);
      const crossSite = await client.post(
        url,
        { name: 'x' },
        { headers: { 'sec-fetch-site': 'cross-site' } },
      );
      expect(crossSite.statusCode, `${route.url} from another site`).toBe(403);
    }
    expect(await victimState()).toBe(before);
  });

  it('refuses a body past the form limit on every post, signed in or not, before reading it', async () => {
    for (const route of routes.filter((r) => r.method === 'POST')) {
      const client = isOperator(route.url) ? asOperator : asAttacker;
      const url = route.url.includes(':') ? withVictimIds(route.url) : route.url;
      // The Relays pages' forms take a relay's file, typed or uploaded (relays/relay-forms.ts).
      const relayForm = RELAY_FORMS[/\/relays\/(\w+)$/.exec(url)?.[1] ?? ''];
      const limit = url.endsWith('/members/import')
        ? UPLOAD_LIMIT_BYTES + FORM_LIMIT_BYTES
        : relayForm === undefined
          ? FORM_LIMIT_BYTES
          : relayFormBodyLimit(relayForm);
      const answer = await client.post(url, { name: 'x'.repeat(limit) });
      expect(answer.statusCode, `${route.url}`).toBe(413);
      expect(answer.headers['content-type'], route.url).toContain('text/html');
    }
  });

  it('refuses control characters in any field of every post with 400, naming the field', async () => {
    const before = await victimState();
    for (const route of routes.filter((r) => r.method === 'POST')) {
      const client = isOperator(route.url) ? asOperator : asAttacker;
      const url = route.url.includes(':') ? withVictimIds(route.url) : route.url;
      const answer = await client.post(url, { name: 'bell\u0007' });
      expect(answer.statusCode, route.url).toBe(400);
      expect(answer.body, route.url).toContain('name: must not contain the character U+0007');
    }
    expect(await victimState()).toBe(before);
  });
});
