import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/access/enforce.js';
import { mayAct, OPERATOR_ROLES, type OperatorRole } from '../../src/domain/operators/roles.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { Browser, signedIn } from '../support/operator-console.js';

// The role matrix over every operator console page and action (found from the server, not
// listed): each role's signed-in session is let through exactly where its role holds the page's
// permission, refused (as a page that does not exist) elsewhere with nothing changed, and a
// disabled operator's session reaches nothing.

let h: Harness;
let pages: DeclaredRoute[];
const sessions = new Map<OperatorRole, Browser>();
const ids: string[] = [];
let disabled: Browser;

beforeAll(async () => {
  h = await startHarness();
  pages = declaredRoutes(h.app).filter((r) => r.access.who === 'operator-session' && r.method !== 'HEAD');
  for (const role of OPERATOR_ROLES) {
    const { browser, operator } = await signedIn(h, role);
    sessions.set(role, browser);
    ids.push(operator.id);
  }
  const gone = await signedIn(h, 'owner');
  disabled = gone.browser;
  ids.push(gone.operator.id);
  const off = await h.app.inject({
    method: 'POST',
    url: `/admin/operators/${gone.operator.id}/disable`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  expect(off.statusCode, off.body).toBe(200);
});
afterAll(async () => h.close());

/** The page's path with each parameter a made-up value. */
const pathOf = (route: DeclaredRoute) => route.url.replace(/:[A-Za-z]+/g, 'x0');

async function auditRowsOf(operatorIds: string[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from audit_log where operator_id = any(${operatorIds}::text[])`.execute(
    h.database.db,
  );
  return Number(rows[0]?.n ?? 0);
}

const permissionOf = (route: DeclaredRoute) =>
  route.access.who === 'operator-session' ? route.access.permission : 'operators';

describe('the role matrix over every operator console page and action', () => {
  it('walks the console pages, each declaring a permission', () => {
    const urls = pages.map((r) => `${r.method} ${r.url}`);
    expect(pages.length).toBeGreaterThan(25);
    expect(urls).toContain('GET /console/operator/operators');
    expect(urls).toContain('POST /console/operator/apps/:appKey/disable');
  });

  it('refuses each role where its role lacks the permission, as a page that does not exist, changing nothing', async () => {
    const before = await auditRowsOf(ids);
    const wrong: string[] = [];
    let tried = 0;
    for (const route of pages) {
      for (const role of OPERATOR_ROLES) {
        if (mayAct([role], permissionOf(route))) continue;
        tried += 1;
        const browser = sessions.get(role) as Browser;
        const reply =
          route.method === 'GET' ? await browser.get(pathOf(route)) : await browser.post(pathOf(route), {});
        if (reply.statusCode !== 404) wrong.push(`${role} ${route.method} ${route.url}: ${reply.statusCode}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(tried).toBeGreaterThan(40);
    expect(await auditRowsOf(ids)).toBe(before);
  });

  it('lets each role open every page its role holds', async () => {
    const wrong: string[] = [];
    let tried = 0;
    for (const route of pages) {
      if (route.method !== 'GET' || route.url.includes(':')) continue;
      for (const role of OPERATOR_ROLES) {
        if (!mayAct([role], permissionOf(route))) continue;
        tried += 1;
        const reply = await (sessions.get(role) as Browser).get(route.url);
        // A page, or (the sign-in's own steps, all done) a redirect to the console's start.
        const fine =
          reply.statusCode === 200 ||
          (reply.statusCode === 303 && reply.headers.location === '/console/operator');
        if (!fine)
          wrong.push(`${role} GET ${route.url}: ${reply.statusCode} ${String(reply.headers.location ?? '')}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(tried).toBeGreaterThan(25);
  });

  it('offers in the navigation only what the role opens', async () => {
    const nav = async (role: OperatorRole) => {
      const page = await (sessions.get(role) as Browser).get('/console/operator');
      return [...page.body.matchAll(/<a href="(\/console\/operator[^"]*)"/g)].map((m) => m[1]);
    };
    expect(await nav('owner')).toContain('/console/operator/operators');
    expect(await nav('admin')).not.toContain('/console/operator/operators');
    expect(await nav('auditor')).toContain('/console/operator/audit');
    expect(await nav('auditor')).not.toContain('/console/operator/apps');
  });

  it("sends a disabled operator's session to sign in, on every page and action, changing nothing", async () => {
    const before = await auditRowsOf(ids);
    const wrong: string[] = [];
    for (const route of pages) {
      const reply =
        route.method === 'GET' ? await disabled.get(pathOf(route)) : await disabled.post(pathOf(route), {});
      if (
        reply.statusCode !== 303 ||
        !String(reply.headers.location).startsWith('/console/operator/sign-in')
      ) {
        wrong.push(`${route.method} ${route.url}: ${reply.statusCode}`);
      }
    }
    expect(wrong).toEqual([]);
    expect(await auditRowsOf(ids)).toBe(before);
  });
});

describe('two operators on one app', () => {
  it('are named, each for what they did, on the console audit page', async () => {
    const ada = await signedIn(h, 'admin');
    const bob = await signedIn(h, 'admin');
    await ada.browser.get('/console/operator/apps');
    const name = `named-${Date.now()}`;
    const created = await ada.browser.post('/console/operator/apps', {
      name,
      scope_auth_order: '1',
      status: 'pending',
    });
    expect(created.statusCode, created.body.slice(0, 300)).toBeLessThan(400);
    const row = await h.database.db
      .selectFrom('apps')
      .select('app_key')
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    await bob.browser.get('/console/operator/apps');
    const approved = await bob.browser.post(`/console/operator/apps/${row.app_key}/approve`, {});
    expect(approved.statusCode).toBe(303);
    const audit = await ada.browser.get(`/console/operator/audit?subject=${encodeURIComponent(row.app_key)}`);
    expect(audit.statusCode).toBe(200);
    expect(audit.body).toContain(ada.operator.name);
    expect(audit.body).toContain(bob.operator.name);
    // Each name links to its operator's page, which has the id that stays if the name changes.
    expect(audit.body).toContain(
      `<a href="/console/operator/operators/${bob.operator.id}" data-operator-id="${bob.operator.id}">${bob.operator.name}</a>`,
    );
    const csv = await ada.browser.get(
      `/console/operator/audit.csv?subject=${encodeURIComponent(row.app_key)}`,
    );
    const lines = csv.body.trim().split('\n');
    expect(lines[0]).toContain('operator,operator_id');
    expect(lines.slice(1).some((l) => l.includes(`${ada.operator.name},${ada.operator.id}`))).toBe(true);
    expect(lines.slice(1).some((l) => l.includes(`${bob.operator.name},${bob.operator.id}`))).toBe(true);
    const rows = await h.database.db
      .selectFrom('audit_log')
      .select(['action', 'operator', 'operator_id'])
      .where('subject', '=', row.app_key)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => [r.action, r.operator, r.operator_id])).toEqual([
      ['app.created', ada.operator.name, ada.operator.id],
      ['app.approved', bob.operator.name, bob.operator.id],
    ]);
  });
});
