import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/domain/shared/secrets.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { addMember, assetWorld, type AssetWorld } from '../support/order-fixtures.js';

let h: Harness;
let world: AssetWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => {
  await h?.close();
});

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function cookieOf(setCookie: string | string[] | undefined): string {
  const header = Array.isArray(setCookie) ? setCookie.join('\n') : (setCookie ?? '');
  const match = /keyward_session=([^;]+)/.exec(header);
  if (!match?.[1]) throw new Error(`no session cookie in ${header}`);
  return match[1];
}

async function operatorSession(): Promise<string> {
  const response = await h.app.inject({
    method: 'POST',
    url: '/console/operator/sign-in',
    headers: FORM,
    payload: new URLSearchParams({ adminKey: ADMIN_KEY }).toString(),
  });
  expect(response.statusCode).toBe(303);
  return cookieOf(response.headers['set-cookie']);
}

async function enterpriseSignIn(userName: string, password: string) {
  return h.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: FORM,
    payload: new URLSearchParams({ userName, password }).toString(),
  });
}

const page = (url: string, secret: string) =>
  h.app.inject({ method: 'GET', url, cookies: { keyward_session: secret } });

/** The CSRF token the page's sign-out form carries. */
async function csrfOf(secret: string, url: string): Promise<string> {
  const response = await page(url, secret);
  const match = /name="_csrf" value="([^"]+)"/.exec(response.body);
  if (!match?.[1]) throw new Error('no CSRF token on the page');
  return match[1];
}

describe('console sessions', () => {
  it('exchanges the admin key for an httpOnly, SameSite=Strict session and audits the sign-in', async () => {
    const wrong = await h.app.inject({
      method: 'POST',
      url: '/console/operator/sign-in',
      headers: FORM,
      payload: 'adminKey=not-the-key',
    });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toContain('That admin key is not right.');

    const right = await h.app.inject({
      method: 'POST',
      url: '/console/operator/sign-in',
      headers: FORM,
      payload: `adminKey=${ADMIN_KEY}`,
    });
    expect(right.statusCode).toBe(303);
    const header = String(right.headers['set-cookie']);
    expect(header).toMatch(/HttpOnly/);
    expect(header).toMatch(/SameSite=Strict/);
    expect(header).toMatch(/Path=\/console/);
    expect(header).not.toMatch(/Secure/);
    expect(header).not.toContain(ADMIN_KEY);
    const secret = cookieOf(right.headers['set-cookie']);
    const row = await h.database.db
      .selectFrom('console_sessions')
      .select(['kind', 'id_hash'])
      .where('id_hash', '=', sha256(secret))
      .executeTakeFirst();
    expect(row?.kind).toBe('operator');
    const audit = await h.app.services.audit.list({ action: 'console.signed_in', limit: 5 });
    expect(
      audit.some((a) => a.operator === 'admin-console' && a.requestId === right.headers['x-request-id']),
    ).toBe(true);
  });

  it('refuses a post without the CSRF token, or from another site, and keeps the session', async () => {
    const secret = await operatorSession();
    const noToken = await h.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: FORM,
      cookies: { keyward_session: secret },
      payload: '',
    });
    expect(noToken.statusCode).toBe(403);
    const token = await csrfOf(secret, '/console/operator');
    const crossSite = await h.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { ...FORM, 'sec-fetch-site': 'cross-site' },
      cookies: { keyward_session: secret },
      payload: `_csrf=${token}`,
    });
    expect(crossSite.statusCode).toBe(403);
    const otherOrigin = await h.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: { ...FORM, origin: 'https://attacker.example' },
      cookies: { keyward_session: secret },
      payload: `_csrf=${token}`,
    });
    expect(otherOrigin.statusCode).toBe(403);
    expect((await page('/console/operator', secret)).statusCode).toBe(200);

    const signedOut = await h.app.inject({
      method: 'POST',
      url: '/console/sign-out',
      headers: FORM,
      cookies: { keyward_session: secret },
      payload: `_csrf=${token}`,
    });
    expect(signedOut.statusCode).toBe(303);
    expect(String(signedOut.headers['set-cookie'])).toMatch(/keyward_session=;/);
    const after = await page('/console/operator', secret);
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe('/console/operator/sign-in?note=expired');
  });

  it('ends a session idle for 30 minutes, and any session 12 hours after sign-in', async () => {
    const idle = await operatorSession();
    await h.database.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql<Date>`now() - interval '31 minutes'` })
      .where('id_hash', '=', sha256(idle))
      .execute();
    expect((await page('/console/operator', idle)).statusCode).toBe(303);

    const old = await operatorSession();
    expect((await page('/console/operator', old)).statusCode).toBe(200);
    await h.database.db
      .updateTable('console_sessions')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('id_hash', '=', sha256(old))
      .execute();
    expect((await page('/console/operator', old)).statusCode).toBe(303);
  });

  it('signs an enterprise administrator in through the password grant, and ends with his token', async () => {
    // Its own enterprise: the end of this test revokes the administrator's tokens.
    const world = await assetWorld(h);
    const wrong = await enterpriseSignIn(world.admin.account, 'wrong-password');
    expect(wrong.statusCode).toBe(200);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    expect(wrong.body).toContain('Wrong account or password.');

    const signedIn = await enterpriseSignIn(world.admin.account, world.admin.password);
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/console/enterprise');
    const secret = cookieOf(signedIn.headers['set-cookie']);
    expect((await page('/console/enterprise', secret)).statusCode).toBe(200);
    // The operator's pages are not his: 404, as for anything he may not see.
    expect((await page('/console/operator', secret)).statusCode).toBe(404);

    // Revoking his user tokens (as a password change or deletion does) ends the session at once.
    const member = await h.database.db
      .selectFrom('members')
      .select('id')
      .where('account', '=', world.admin.account)
      .executeTakeFirstOrThrow();
    await h.app.services.tokens.revokeForMember(member.id);
    const after = await page('/console/enterprise', secret);
    expect(after.statusCode).toBe(303);
    expect(after.headers.location).toBe('/console/sign-in?note=expired');
  });

  it('lets only the enterprise administrator in, not his employees', async () => {
    const employee = await addMember(world);
    const response = await enterpriseSignIn(employee.account, employee.password);
    expect(response.statusCode).toBe(403);
    expect(response.headers['set-cookie']).toBeUndefined();
    expect(response.body).toContain('Only the enterprise administrator can use the console.');
  });

  it('gives the console client no secret that authenticates at /oauth2/token', async () => {
    for (const secret of ['!', '', 'keyward-console']) {
      const response = await h.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        headers: FORM,
        payload: new URLSearchParams({
          grant_type: 'password',
          client_id: 'keyward-console',
          client_secret: secret,
          username: world.admin.account,
          password: world.admin.password,
        }).toString(),
      });
      expect(response.statusCode).toBe(401);
      expect(response.json().error).toBe('invalid_client');
    }
  });

  it('marks the cookie Secure over https (TRUST_PROXY) or with COOKIE_SECURE=1', async () => {
    const secure = await startHarness({ COOKIE_SECURE: '1' });
    try {
      const response = await secure.app.inject({
        method: 'POST',
        url: '/console/operator/sign-in',
        headers: FORM,
        payload: `adminKey=${ADMIN_KEY}`,
      });
      expect(String(response.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
    const proxied = await startHarness({ TRUST_PROXY: '1' });
    try {
      const response = await proxied.app.inject({
        method: 'POST',
        url: '/console/operator/sign-in',
        headers: { ...FORM, 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.9' },
        payload: `adminKey=${ADMIN_KEY}`,
      });
      expect(String(response.headers['set-cookie'])).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('rate-limits operator sign-ins per address', async () => {
    const address = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    const statuses: number[] = [];
    for (let i = 0; i < 22; i++) {
      const response = await h.app.inject({
        method: 'POST',
        url: '/console/operator/sign-in',
        headers: FORM,
        remoteAddress: address,
        payload: 'adminKey=guess',
      });
      statuses.push(response.statusCode);
    }
    expect(statuses.slice(0, 20).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(20)).toEqual([429, 429]);
  });

  it('goes back only to a console page after a language change, and refuses control characters', async () => {
    for (const back of ['//attacker.example/', 'https://attacker.example/', '/docs']) {
      const response = await h.app.inject({
        method: 'GET',
        url: `/console/language?${new URLSearchParams({ lang: 'zh-CN', back })}`,
      });
      expect(response.statusCode).toBe(303);
      expect(response.headers.location).toBe('/console');
    }
    const kept = await h.app.inject({
      method: 'GET',
      url: '/console/language?lang=zh-CN&back=/console/sign-in',
    });
    expect(kept.headers.location).toBe('/console/sign-in');
    expect(String(kept.headers['set-cookie'])).toContain('keyward_lang=zh-CN');

    const control = await enterpriseSignIn(`${world.admin.account}\u0007`, world.admin.password);
    expect(control.statusCode).toBe(400);
    expect(control.headers['content-type']).toContain('text/html');
    expect(control.headers['set-cookie']).toBeUndefined();
  });

  it('comes back from a refused form to the page the form was on, never elsewhere', async () => {
    const backOf = async (referer?: string) => {
      const refused = await h.app.inject({
        method: 'POST',
        url: '/console/operator/sign-in',
        headers: { ...FORM, ...(referer === undefined ? {} : { referer }) },
        payload: new URLSearchParams({ adminKey: 'not-the-key' }).toString(),
      });
      expect(refused.statusCode).toBe(401);
      return /name="back" value="([^"]*)"/.exec(refused.body)?.[1];
    };
    // The post's own address has no page (GET /console/operator/sign-in?… is the form, but a
    // refused replay's /…/replay is not): the language switch goes back to the referring page.
    expect(await backOf('http://localhost/console/operator/sign-in?note=expired')).toBe(
      '/console/operator/sign-in?note=expired',
    );
    expect(await backOf()).toBe('/console');
    expect(await backOf('https://attacker.example/console/operator')).toBe('/console');
    expect(await backOf('http://localhost/docs')).toBe('/console');
    expect(await backOf('not a url')).toBe('/console');
  });

  it('serves the operator area only on the admin listener when there is one', async () => {
    const apart = await startHarness({ ADMIN_PORT: '0', HOST: '127.0.0.1' });
    try {
      const response = await apart.app.inject({ method: 'GET', url: '/console/operator/sign-in' });
      expect(response.statusCode).toBe(404);
      const enterprise = await apart.app.inject({ method: 'GET', url: '/console/sign-in' });
      expect(enterprise.statusCode).toBe(200);
    } finally {
      await apart.close();
    }
  });
});
