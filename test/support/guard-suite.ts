import { beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/domain/shared/secrets.js';
import {
  appToken,
  createTestApp,
  seedEnterprise,
  userToken,
  type TestApp,
  type TestEnterprise,
} from './fixtures.js';
import { nonce, type Harness } from './harness.js';

export interface GuardTarget {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path without the query; `ctx` holds the enterprise the caller belongs to. */
  path: (ctx: { enterprise: TestEnterprise; app: TestApp }) => string;
  payload?: (ctx: { enterprise: TestEnterprise; app: TestApp }) => unknown;
}

function expectCode(response: { statusCode: number; json: () => unknown }, code: string): void {
  expect(response.statusCode).toBe(299);
  expect((response.json() as { code: string }).code).toBe(code);
}

async function expireToken(h: Harness, token: string): Promise<void> {
  await h.database.db
    .updateTable('tokens')
    .set({ expires_at: new Date(Date.now() - 1000) })
    .where('token_hash', '=', sha256(token))
    .execute();
}

/** Every order-service operation answers these guard failures the same way (DOMAIN.md §2–3). */
export function orderGuardSuite(harness: () => Harness, target: GuardTarget): void {
  describe('order guards', () => {
    let h: Harness;
    let app: TestApp;
    let enterprise: TestEnterprise;
    const call = (headers: Record<string, string>, query = `g_nonce=${nonce()}`) =>
      h.app.inject({
        method: target.method,
        url: `${target.path({ enterprise, app })}?${query}`,
        headers,
        ...(target.payload ? { payload: target.payload({ enterprise, app }) as object } : {}),
      });

    beforeAll(async () => {
      h = harness();
      app = await createTestApp(h, { scopes: ['auth_order'] });
      enterprise = await seedEnterprise(h);
    });

    it('refuses a missing token with 60000', async () => {
      expectCode(await call({}), '60000');
    });
    it('refuses an unknown token with 60000', async () => {
      expectCode(await call({ authorization: 'Bearer not-a-token' }), '60000');
    });
    it('refuses an expired token with 60000', async () => {
      const token = await appToken(h, app);
      await expireToken(h, token);
      expectCode(await call({ authorization: `Bearer ${token}` }), '60000');
    });
    it('refuses the token of a disabled app with 60000', async () => {
      const other = await createTestApp(h, { scopes: ['auth_order'] });
      const token = await appToken(h, other);
      await h.app.services.apps.disable(other.appKey);
      expectCode(await call({ authorization: `Bearer ${token}` }), '60000');
    });
    it('refuses an app without auth_order with 60000', async () => {
      const other = await createTestApp(h, { scopes: ['auth_me'] });
      expectCode(await call({ authorization: `Bearer ${await appToken(h, other)}` }), '60000');
    });
    it('refuses a token issued for auth_me only, of an app that holds auth_order too, with 60000', async () => {
      const both = await createTestApp(h, { scopes: ['auth_order', 'auth_me'], channels: app.channels });
      expectCode(await call({ authorization: `Bearer ${await appToken(h, both, 'auth_me')}` }), '60000');
    });
    it('refuses a missing or malformed nonce with 70001', async () => {
      const auth = { authorization: `Bearer ${await appToken(h, app)}` };
      expectCode(await call(auth, ''), '70001');
      expectCode(await call(auth, 'g_nonce=short'), '70001');
      expectCode(await call(auth, 'g_nonce=has%20space%20in%20it'), '70001');
    });
    it('refuses a replayed nonce with 70001', async () => {
      const auth = { authorization: `Bearer ${await appToken(h, app)}` };
      const once = `g_nonce=${nonce()}`;
      const first = await call(auth, once);
      expect((first.json() as { code: unknown }).code).not.toBe('70001');
      expectCode(await call(auth, once), '70001');
    });
  });
}

/** Every member-center operation answers these guard failures the same way (DOMAIN.md §2–3). */
export function memberGuardSuite(harness: () => Harness, target: GuardTarget): void {
  describe('member-center guards', () => {
    let h: Harness;
    let app: TestApp;
    let enterprise: TestEnterprise;
    let appTok: string;
    let userTok: string;
    const call = (headers: Record<string, string>, options: { query?: string; path?: string } = {}) =>
      h.app.inject({
        method: target.method,
        url: `${options.path ?? target.path({ enterprise, app })}?${options.query ?? `g_nonce=${nonce()}`}`,
        headers,
        ...(target.payload ? { payload: target.payload({ enterprise, app }) as object } : {}),
      });

    beforeAll(async () => {
      h = harness();
      app = await createTestApp(h, { scopes: ['auth_me'] });
      enterprise = await seedEnterprise(h);
      appTok = await appToken(h, app);
      userTok = await userToken(h, app, enterprise.adminAccount, enterprise.adminPassword);
    });

    it('refuses a missing app token with 60000', async () => {
      expectCode(await call({ usertoken: userTok }), '60000');
    });
    it('refuses an unknown or expired app token with 60000', async () => {
      expectCode(await call({ authorization: 'Bearer nope', usertoken: userTok }), '60000');
      const token = await appToken(h, app);
      await expireToken(h, token);
      expectCode(await call({ clienttoken: token, usertoken: userTok }), '60000');
    });
    it('refuses an app without auth_me with 60000', async () => {
      const other = await createTestApp(h, { scopes: ['auth_order'] });
      expectCode(
        await call({ authorization: `Bearer ${await appToken(h, other)}`, usertoken: userTok }),
        '60000',
      );
    });
    it('refuses a token issued for auth_order only, of an app that holds auth_me too, with 60000', async () => {
      const both = await createTestApp(h, { scopes: ['auth_order', 'auth_me'] });
      const user = await userToken(h, both, enterprise.adminAccount, enterprise.adminPassword);
      expectCode(
        await call({ authorization: `Bearer ${await appToken(h, both, 'auth_order')}`, usertoken: user }),
        '60000',
      );
    });
    it('refuses a missing or replayed nonce with 70001', async () => {
      const headers = { authorization: `Bearer ${appTok}`, usertoken: userTok };
      expectCode(await call(headers, { query: '' }), '70001');
      const once = `g_nonce=${nonce()}`;
      await call(headers, { query: once });
      expectCode(await call(headers, { query: once }), '70001');
    });
    it('refuses a missing, unknown or expired user token with 60005', async () => {
      expectCode(await call({ authorization: `Bearer ${appTok}` }), '60005');
      expectCode(await call({ authorization: `Bearer ${appTok}`, usertoken: 'nope' }), '60005');
      const expiring = await userToken(h, app, enterprise.adminAccount, enterprise.adminPassword);
      await expireToken(h, expiring);
      expectCode(await call({ authorization: `Bearer ${appTok}`, usertoken: expiring }), '60005');
    });
    it('refuses differing clientToken and Bearer with 70001', async () => {
      const second = await appToken(h, app);
      expectCode(
        await call({ authorization: `Bearer ${appTok}`, clienttoken: second, usertoken: userTok }),
        '70001',
      );
    });
    it('refuses a user token issued to another app with 70001', async () => {
      const other = await createTestApp(h, { scopes: ['auth_me'] });
      expectCode(
        await call({ authorization: `Bearer ${await appToken(h, other)}`, usertoken: userTok }),
        '70001',
      );
    });
    it('refuses a user of another enterprise with 70001', async () => {
      const stranger = await seedEnterprise(h, 'Stranger Co');
      const strangerToken = await userToken(h, app, stranger.adminAccount, stranger.adminPassword);
      const response = await call({ authorization: `Bearer ${appTok}`, usertoken: strangerToken });
      const path = target.path({ enterprise, app });
      // Paths that name the enterprise refuse at the guard; the others find nothing of it.
      if (path.includes(enterprise.globalId)) expectCode(response, '70001');
      else expect(response.statusCode).toBe(299);
    });
  });
}
