import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { declaredRoutes, type DeclaredRoute } from '../../src/http/access/enforce.js';
import { ADMIN_KEY_FAILURES_PER_MINUTE } from '../../src/http/guards/admin-key-guard.js';
import { mayAct, OPERATOR_ROLES, type OperatorRole } from '../../src/domain/operators/roles.js';
import {
  ADMIN_KEY,
  awayFromMinuteEnd,
  startHarness,
  startIsolatedHarness,
  uniqueCode,
  type Harness,
} from '../support/harness.js';
import { TEST_ENV } from '../support/test-env.js';

// Named operators with roles, and their personal API tokens, on the admin API: every admin route
// (found from the server, not listed) called with a token of every role, a disabled operator's,
// an expired and a revoked token: allowed exactly where the role says, nothing done elsewhere.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

const call = (method: string, url: string, bearer: string, payload?: object, remoteAddress?: string) =>
  h.app.inject({
    method: method as 'GET' | 'POST',
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${bearer}` },
    ...(payload === undefined ? {} : { payload }),
    ...(remoteAddress === undefined ? {} : { remoteAddress }),
  });

const asKey = (method: 'GET' | 'POST', url: string, payload?: object) =>
  call(method, url, ADMIN_KEY, payload);

interface Added {
  operator: { id: string; email: string; role: OperatorRole; name: string };
  password: string;
}

async function addOperator(role: OperatorRole, name = `${role} ${uniqueCode('op')}`): Promise<Added> {
  const added = await asKey('POST', '/operators', { name, email: `${uniqueCode(role)}@example.com`, role });
  expect(added.statusCode, added.body).toBe(200);
  return added.json();
}

async function tokenFor(
  operator: string,
  payload: object = {},
): Promise<{ token: string; view: { id: string } }> {
  const created = await asKey('POST', `/operators/${operator}/tokens`, { name: 'walk', ...payload });
  expect(created.statusCode, created.body).toBe(200);
  return created.json();
}

/** Audit rows a set of operators caused: what a refused call must not add to. */
async function auditRowsOf(operatorIds: string[]): Promise<number> {
  const { rows } = await sql<{ n: string }>`
    select count(*) as n from audit_log where operator_id = any(${operatorIds}::text[])`.execute(
    h.database.db,
  );
  return Number(rows[0]?.n ?? 0);
}

describe('operators', () => {
  it('adds operators with a one-time password kept only as a hash, and refuses a taken email or a bad field', async () => {
    const added = await addOperator('support', 'Sam Support');
    expect(added.password.length).toBeGreaterThanOrEqual(16);
    const stored = await h.database.db
      .selectFrom('operators')
      .select(['password_hash', 'must_change_password'])
      .where('id', '=', added.operator.id)
      .executeTakeFirstOrThrow();
    expect(stored.password_hash).not.toContain(added.password);
    expect(stored.password_hash).toMatch(/^\$argon2id\$/);
    expect(stored.must_change_password).toBe(true);

    const again = await asKey('POST', '/operators', {
      name: 'Someone else',
      email: added.operator.email.toUpperCase(),
      role: 'admin',
    });
    expect(again.statusCode).toBe(409);
    expect(again.json()).toEqual({
      error: expect.stringMatching(/^email: .* is another operator's already$/),
    });

    const badEmail = await asKey('POST', '/operators', { name: 'X', email: 'not-an-email', role: 'admin' });
    expect(badEmail.statusCode).toBe(400);
    expect(badEmail.json()).toEqual({ error: 'email: not an email address' });
    const badRole = await asKey('POST', '/operators', { name: 'X', email: 'x@example.com', role: 'root' });
    expect(badRole.statusCode).toBe(400);
    expect(badRole.json().error).toMatch(/role/);

    const listed = (await asKey('GET', '/operators')).json() as Array<Record<string, unknown>>;
    const mine = listed.find((o) => o.id === added.operator.id);
    expect(mine).toMatchObject({ name: 'Sam Support', role: 'support', status: 'active' });
    expect(JSON.stringify(listed)).not.toContain('password');

    const reset = await asKey('POST', `/operators/${added.operator.email}/reset`);
    expect(reset.statusCode).toBe(200);
    expect(reset.json().password).not.toBe(added.password);
  });

  it('shows a token once, keeps only its hash, and refuses one wider than its operator', async () => {
    const support = await addOperator('support');
    const created = await tokenFor(support.operator.id, { days: 30 });
    expect(created.token).toMatch(/^kwp_/);
    const row = await h.database.db
      .selectFrom('operator_tokens')
      .selectAll()
      .where('id', '=', created.view.id)
      .executeTakeFirstOrThrow();
    expect(row.token_hash).not.toContain(created.token);
    expect(row.role).toBe('support');
    const listed = await call('GET', '/operators/me/tokens', created.token);
    expect(listed.statusCode).toBe(200);
    expect(listed.body).not.toContain(created.token);
    expect(listed.json()).toEqual([expect.objectContaining({ id: created.view.id, name: 'walk' })]);

    const wider = await asKey('POST', `/operators/${support.operator.id}/tokens`, {
      name: 'w',
      role: 'admin',
    });
    expect(wider.statusCode).toBe(400);
    expect(wider.json().error).toMatch(/^role: admin is wider than/);
    const tooLong = await asKey('POST', `/operators/${support.operator.id}/tokens`, { name: 'w', days: 367 });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.json().error).toMatch(/days/);
  });

  it('keeps the last active owner: not demoted, not disabled', async () => {
    // On a database of its own: the rule bites only when no other owner is active, and demoting
    // the other owners of the shared PostgreSQL database would take those of the files beside it.
    const alone = await startIsolatedHarness();
    const key = (method: 'GET' | 'POST', url: string, payload?: object) =>
      alone.app.inject({
        method,
        url: `/admin${url}`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        ...(payload === undefined ? {} : { payload }),
      });
    try {
      const added = await key('POST', '/operators', {
        name: 'The only owner',
        email: `${uniqueCode('owner')}@example.com`,
        role: 'owner',
      });
      expect(added.statusCode, added.body).toBe(200);
      const owner = (added.json() as Added).operator;
      const listed = (await key('GET', '/operators')).json() as Array<{
        id: string;
        role: string;
        status: string;
      }>;
      expect(listed.filter((o) => o.role === 'owner' && o.status === 'active').map((o) => o.id)).toEqual([
        owner.id,
      ]);
      const demoted = await key('POST', `/operators/${owner.id}/role`, { role: 'admin' });
      expect(demoted.statusCode).toBe(409);
      expect(demoted.json().error).toMatch(/last active owner/);
      const disabled = await key('POST', `/operators/${owner.id}/disable`);
      expect(disabled.statusCode).toBe(409);
      const after = (await key('GET', '/operators')).json() as Array<{
        id: string;
        role: string;
        status: string;
      }>;
      expect(after.find((o) => o.id === owner.id)).toMatchObject({ role: 'owner', status: 'active' });
    } finally {
      await alone.close();
    }
  });
});

function pathOf(route: DeclaredRoute): string {
  return route.url.replace(/:([A-Za-z]+)/g, 'x1walk').replace(/^\/admin/, '');
}

describe('the role matrix over every admin route', () => {
  let adminRoutes: DeclaredRoute[];
  const tokens = new Map<OperatorRole, string>();
  const operatorIds: string[] = [];
  let disabledToken: string;
  let revokedToken: string;
  let expiredToken: string;

  beforeAll(async () => {
    adminRoutes = declaredRoutes(h.app).filter((r) => r.access.who === 'admin' && r.method !== 'HEAD');
    for (const role of OPERATOR_ROLES) {
      const added = await addOperator(role);
      operatorIds.push(added.operator.id);
      tokens.set(role, (await tokenFor(added.operator.id)).token);
    }
    const gone = await addOperator('owner');
    operatorIds.push(gone.operator.id);
    disabledToken = (await tokenFor(gone.operator.id)).token;
    expect((await asKey('POST', `/operators/${gone.operator.id}/disable`)).json()).toMatchObject({
      tokensRevoked: 1,
    });
    const owner = await addOperator('owner');
    operatorIds.push(owner.operator.id);
    const revoked = await tokenFor(owner.operator.id);
    revokedToken = revoked.token;
    expect(
      (await call('POST', `/operators/me/tokens/${revoked.view.id}/revoke`, revokedToken)).statusCode,
    ).toBe(200);
    const expired = await tokenFor(owner.operator.id, { days: 1 });
    expiredToken = expired.token;
    await h.database.db
      .updateTable('operator_tokens')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('id', '=', expired.view.id)
      .execute();
  });

  it('walks more than twenty admin routes, each declaring a permission', () => {
    expect(adminRoutes.length).toBeGreaterThan(20);
    const urls = adminRoutes.map((r) => `${r.method} ${r.url}`);
    expect(urls).toContain('POST /admin/operators');
    expect(urls).toContain('GET /admin/audit');
  });

  it('refuses each role where its role lacks the permission, and changes nothing', async () => {
    const before = await auditRowsOf(operatorIds);
    const wrong: string[] = [];
    let tried = 0;
    for (const route of adminRoutes) {
      for (const role of OPERATOR_ROLES) {
        if (route.access.who !== 'admin' || mayAct([role], route.access.permission)) continue;
        tried += 1;
        const reply: Reply = await call(
          route.method,
          pathOf(route),
          tokens.get(role) ?? '',
          route.method === 'POST' ? {} : undefined,
        );
        if (reply.statusCode !== 403 || !reply.body.includes(route.access.permission)) {
          wrong.push(`${role} ${route.method} ${route.url}: ${reply.statusCode} ${reply.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    // admin lacks operators, keys and backup; support and auditor far more.
    expect(tried).toBeGreaterThan(30);
    expect(await auditRowsOf(operatorIds)).toBe(before);
  });

  it('lets each role through where its role holds the permission', async () => {
    const wrong: string[] = [];
    let tried = 0;
    for (const route of adminRoutes) {
      // A route that acts on the whole platform (declared beside its access): its permission is
      // walked above, its run left out, as a call with an empty body would really do it.
      if (route.effect === 'whole-platform') continue;
      for (const role of OPERATOR_ROLES) {
        if (route.access.who !== 'admin' || !mayAct([role], route.access.permission)) continue;
        tried += 1;
        const reply = await call(
          route.method,
          pathOf(route),
          tokens.get(role) ?? '',
          route.method === 'POST' ? {} : undefined,
        );
        // Through the check: the route itself answers (a made-up id is not found, an empty body invalid).
        if ([401, 403, 429, 500].includes(reply.statusCode)) {
          wrong.push(`${role} ${route.method} ${route.url}: ${reply.statusCode} ${reply.body.slice(0, 120)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(tried).toBeGreaterThan(40);
  });

  it("refuses a disabled operator's, a revoked and an expired token on every route, saying which", async () => {
    const before = await auditRowsOf(operatorIds);
    const cases = [
      [disabledToken, /^token revoked/],
      [revokedToken, /^token revoked/],
      [expiredToken, /^token expired/],
    ] as const;
    const wrong: string[] = [];
    for (const route of adminRoutes) {
      for (const [token, message] of cases) {
        const reply = await call(
          route.method,
          pathOf(route),
          token,
          route.method === 'POST' ? {} : undefined,
        );
        if (reply.statusCode !== 401 || !message.test(String(reply.json().error))) {
          wrong.push(`${route.method} ${route.url}: ${reply.statusCode} ${reply.body.slice(0, 100)}`);
        }
      }
    }
    expect(wrong).toEqual([]);
    expect(await auditRowsOf(operatorIds)).toBe(before);
  });

  it('names the operator in the audit rows of what a token did', async () => {
    const admin = await addOperator('admin', 'Ada Admin');
    const { token } = await tokenFor(admin.operator.id);
    const created = await call('POST', '/apps', token, {
      name: `audited ${uniqueCode('a')}`,
      scopes: ['auth_order'],
    });
    expect(created.statusCode, created.body).toBe(200);
    const appKey = String(created.json().appKey);
    const rows = (await asKey('GET', `/audit?subject=${appKey}`)).json() as Array<Record<string, unknown>>;
    expect(rows).toEqual([
      expect.objectContaining({
        action: 'app.created',
        operator: 'Ada Admin',
        operatorId: admin.operator.id,
      }),
    ]);
    // The admin key names no one: its rows say which surface it came through.
    await asKey('POST', `/apps/${appKey}/disable`);
    const byKey = (await asKey('GET', `/audit?subject=${appKey}&action=app.disabled`)).json() as Array<
      Record<string, unknown>
    >;
    expect(byKey).toEqual([expect.objectContaining({ operator: 'admin-api', operatorId: null })]);
  });

  it('counts unknown tokens against the address as wrong keys', async () => {
    await awayFromMinuteEnd();
    const address = '203.0.113.77';
    for (let i = 0; i < ADMIN_KEY_FAILURES_PER_MINUTE; i += 1) {
      expect((await call('GET', '/apps', `kwp_guess${i}`, undefined, address)).statusCode).toBe(401);
    }
    const limited = await call('GET', '/apps', tokens.get('owner') ?? '', undefined, address);
    expect(limited.statusCode).toBe(429);
  });
});

describe('ADMIN_KEY_ENABLED=0', () => {
  it('refuses the admin key on the admin API and the console sign-in, and takes tokens', async () => {
    const owner = await addOperator('owner');
    const { token } = await tokenFor(owner.operator.id);
    const config = loadConfig({ DATA_DIR: '/nonexistent-test-data', ...TEST_ENV, ADMIN_KEY_ENABLED: '0' });
    const app = await buildApp({ config, db: h.database.db, adminKey: ADMIN_KEY });
    await app.ready();
    try {
      const byKey = await app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(byKey.statusCode).toBe(401);
      expect(byKey.json().error).toMatch(/ADMIN_KEY_ENABLED=0/);
      const byToken = await app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${token}` },
      });
      expect(byToken.statusCode).toBe(200);
      const signIn = await app.inject({
        method: 'POST',
        url: '/console/operator/sign-in',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: `adminKey=${encodeURIComponent(ADMIN_KEY)}`,
      });
      expect(signIn.statusCode).toBe(401);
      expect(signIn.headers['set-cookie']).toBeUndefined();
    } finally {
      await app.close();
    }
  });
});
