import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken } from '../support/fixtures.js';
import { ADMIN_KEY_FAILURES_PER_MINUTE } from '../../src/http/guards/admin-key-guard.js';
import { ADMIN_KEY, awayFromMinuteEnd, nonce, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

const admin = (method: 'GET' | 'POST', url: string, payload?: object, key = ADMIN_KEY) =>
  h.app.inject({
    method,
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${key}` },
    ...(payload ? { payload } : {}),
  });

describe('admin API', () => {
  it('refuses a missing or wrong admin key, saying which', async () => {
    const missing = await h.app.inject({ method: 'GET', url: '/admin/apps' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json()).toEqual({
      error: 'admin key missing: send it as Authorization: Bearer <admin key>',
    });
    const wrong = await admin('GET', '/apps', undefined, 'wrong');
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({ error: 'admin key wrong' });
  });

  it('creates, lists, disables and rotates an application, never showing a stored secret', async () => {
    const created = await admin('POST', '/apps', {
      name: 'shop',
      scopes: ['auth_order'],
      channels: ['SHOP'],
    });
    expect(created.statusCode).toBe(200);
    const app = created.json() as { appKey: string; appSecret: string; status: string };
    expect(Object.keys(app).sort()).toEqual(['appKey', 'appSecret', 'channels', 'scopes', 'status']);
    expect(app.status).toBe('active');
    const listed = (await admin('GET', '/apps')).json() as Array<Record<string, unknown>>;
    const mine = listed.find((a) => a.appKey === app.appKey);
    expect(mine).toMatchObject({ name: 'shop', status: 'active', channels: ['SHOP'] });
    expect(JSON.stringify(listed)).not.toContain(app.appSecret);
    expect(JSON.stringify(listed)).not.toContain('secret');

    const rotated = (await admin('POST', `/apps/${app.appKey}/rotate-secret`)).json() as {
      appSecret: string;
    };
    expect(rotated.appSecret).not.toBe(app.appSecret);
    expect(await h.app.services.apps.authenticate(app.appKey, app.appSecret)).toBeUndefined();
    expect(await h.app.services.apps.authenticate(app.appKey, rotated.appSecret)).toBeDefined();

    expect((await admin('POST', `/apps/${app.appKey}/disable`)).json()).toMatchObject({ status: 'disabled' });
    expect(await h.app.services.apps.authenticate(app.appKey, rotated.appSecret)).toBeUndefined();
  });

  it('rotates a secret keeping the tokens issued before, or revoking them at once when asked', async () => {
    const app = (
      await admin('POST', '/apps', { name: 'crm', scopes: ['auth_order'], channels: ['CRM'] })
    ).json() as {
      appKey: string;
      appSecret: string;
    };
    const old = await appToken(h, { ...app, channels: ['CRM'] });
    const call = async () =>
      (
        await h.app.inject({
          method: 'POST',
          url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
          headers: { authorization: `Bearer ${old}` },
          payload: { size: 1 },
        })
      ).json() as { code: unknown };

    const kept = await admin('POST', `/apps/${app.appKey}/rotate-secret`);
    expect(kept.json()).toMatchObject({ appKey: app.appKey, tokensRevoked: false });
    expect((await call()).code).toBe(0);

    const revoked = await admin('POST', `/apps/${app.appKey}/rotate-secret`, { revokeTokens: true });
    expect(revoked.statusCode).toBe(200);
    const body = revoked.json() as Record<string, unknown>;
    expect(Object.keys(body)).toEqual([
      'appKey',
      'appSecret',
      'scopes',
      'channels',
      'status',
      'tokensRevoked',
    ]);
    expect(body.tokensRevoked).toBe(true);
    expect((await call()).code).toBe('60000');
    // The new secret gets tokens that work.
    const fresh = await appToken(h, {
      appKey: app.appKey,
      appSecret: String(body.appSecret),
      channels: ['CRM'],
    });
    expect(fresh).not.toBe(old);
  });

  it('issues no token for a secret rotated away while the request was being answered', async () => {
    const app = (
      await admin('POST', '/apps', { name: 'crm', scopes: ['auth_order'], channels: ['CRM'] })
    ).json() as {
      appKey: string;
      appSecret: string;
    };
    // The token endpoint authenticated the client with the old secret just before the rotation.
    const client = await h.app.services.apps.authenticate(app.appKey, app.appSecret);
    expect(client).toBeDefined();
    await admin('POST', `/apps/${app.appKey}/rotate-secret`, { revokeTokens: true });
    const issued = await h.app.services.tokens.issue({
      app: client ?? { id: '', secretHash: '' },
      scopes: ['auth_order'],
      memberId: null,
    });
    expect(issued).toBeUndefined();
  });

  it('creates a pending app that works only once approved', async () => {
    const app = (
      await admin('POST', '/apps', { name: 'crm', scopes: ['auth_me'], pending: true })
    ).json() as { appKey: string; status: string };
    expect(app.status).toBe('pending');
    expect((await admin('POST', `/apps/${app.appKey}/approve`)).json()).toMatchObject({ status: 'active' });
  });

  it('answers operator mistakes with 400 and 404', async () => {
    expect((await admin('POST', '/apps', { name: 'x', scopes: ['root'] })).statusCode).toBe(400);
    expect(
      (await admin('POST', '/apps', { name: 'x', scopes: ['auth_me'], channels: ['bad channel'] }))
        .statusCode,
    ).toBe(400);
    expect((await admin('POST', '/apps/kw_missing/disable')).statusCode).toBe(404);
  });
});

describe('admin key guessing', () => {
  it('answers 429 to an address past 20 wrong keys a minute, the right key included, and no other address', async () => {
    await awayFromMinuteEnd();
    const guesser = `198.51.100.${Math.floor(Math.random() * 200) + 1}`;
    const call = (key: string, remoteAddress: string) =>
      h.app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${key}` },
        remoteAddress,
      });
    const statuses: number[] = [];
    for (let i = 0; i < ADMIN_KEY_FAILURES_PER_MINUTE; i += 1)
      statuses.push((await call(`guess-${i}`, guesser)).statusCode);
    expect(statuses).toEqual(Array(ADMIN_KEY_FAILURES_PER_MINUTE).fill(401));
    const limited = await call(ADMIN_KEY, guesser);
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.json()).toEqual({ error: expect.stringMatching(/too many wrong admin keys/) });
    // The operator's console sign-in shares the budget: the key cannot be guessed there instead.
    const console = await h.app.inject({
      method: 'POST',
      url: '/console/operator/sign-in',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `adminKey=${encodeURIComponent(ADMIN_KEY)}`,
      remoteAddress: guesser,
    });
    expect(console.statusCode).toBe(429);
    expect((await call(ADMIN_KEY, '198.51.100.250')).statusCode).toBe(200);
  });

  it('counts an IPv6 /64 as one address: walking its addresses buys no fresh budget', async () => {
    await awayFromMinuteEnd();
    const net = `2001:db8:${Math.floor(Math.random() * 0xffff).toString(16)}:1`;
    const call = (key: string, host: number) =>
      h.app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${key}` },
        remoteAddress: `${net}::${host.toString(16)}`,
      });
    for (let i = 0; i < ADMIN_KEY_FAILURES_PER_MINUTE; i += 1)
      expect((await call(`guess-${i}`, i + 1)).statusCode).toBe(401);
    expect((await call(ADMIN_KEY, 0xbeef)).statusCode).toBe(429);
  });

  it('does not count a call that sends no key at all', async () => {
    await awayFromMinuteEnd();
    const prober = `203.0.113.${Math.floor(Math.random() * 200) + 1}`;
    for (let i = 0; i < ADMIN_KEY_FAILURES_PER_MINUTE + 5; i += 1) {
      const response = await h.app.inject({ method: 'GET', url: '/admin/status', remoteAddress: prober });
      expect(response.statusCode).toBe(401);
    }
  });
});
