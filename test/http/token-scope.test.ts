import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import {
  createTestApp,
  seedEnterprise,
  userToken,
  type TestApp,
  type TestEnterprise,
} from '../support/fixtures.js';
import { nonce, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { dataOf, expectFailure } from './member-helpers.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';

// A token carries the scopes it was issued with (DOMAIN.md §2): an app holding both scopes that
// asks for one gets a token good for that surface only, on the database gate and the Redis gate.

const hasRedis = await redisAvailable();

function scopeSuite(name: string, env: Record<string, string>, enabled: boolean): void {
  describe.runIf(enabled)(name, () => {
    let h: Harness;
    let app: TestApp;
    let enterprise: TestEnterprise;
    let user: string;

    beforeAll(async () => {
      h = await startHarness(env);
      app = await createTestApp(h, { scopes: ['auth_order', 'auth_me'] });
      enterprise = await seedEnterprise(h);
      user = await userToken(h, app, enterprise.adminAccount, enterprise.adminPassword);
    });
    afterAll(async () => h.close());

    const tokenFor = async (scope: string) => {
      const response = await h.app.inject({
        method: 'POST',
        url: '/oauth2/token',
        payload: {
          grant_type: 'client_credentials',
          client_id: app.appKey,
          client_secret: app.appSecret,
          scope,
        },
      });
      expect(response.json()).toMatchObject({ scope });
      return (response.json() as { access_token: string }).access_token;
    };
    const memberCenter = (token: string) =>
      h.app.inject({
        method: 'GET',
        url: `${ME_PREFIX}/enterprise/${enterprise.globalId}/members?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${token}`, usertoken: user },
      });
    const orderService = (token: string) =>
      h.app.inject({
        method: 'GET',
        url: `${ORDER_PREFIX}/enterprise/user/query?channelCode=${app.channels[0] ?? ''}&channelCustomerId=${uniqueCode('cust')}&g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${token}` },
      });

    it('lets an auth_me token into the member center and not into the order service', async () => {
      const token = await tokenFor('auth_me');
      expect(dataOf<{ total: number }>(await memberCenter(token)).total).toBeGreaterThanOrEqual(1);
      expectFailure(await orderService(token), '60000');
    });

    it('lets an auth_order token into the order service and not into the member center', async () => {
      const token = await tokenFor('auth_order');
      expect(dataOf<unknown[]>(await orderService(token))).toEqual([]);
      expectFailure(await memberCenter(token), '60000');
    });

    it('takes a scope the app no longer holds from tokens issued while it did', async () => {
      const token = await tokenFor('auth_order auth_me');
      expect(dataOf<unknown[]>(await orderService(token))).toEqual([]);
      await h.database.db
        .updateTable('apps')
        .set({ scopes: ['auth_me'] })
        .where('app_key', '=', app.appKey)
        .execute();
      try {
        expectFailure(await orderService(token), '60000');
        expect(dataOf<{ total: number }>(await memberCenter(token)).total).toBeGreaterThanOrEqual(1);
      } finally {
        await h.database.db
          .updateTable('apps')
          .set({ scopes: ['auth_order', 'auth_me'] })
          .where('app_key', '=', app.appKey)
          .execute();
      }
    });
  });
}

scopeSuite('token scopes, database gate', {}, true);
scopeSuite('token scopes, Redis gate', { REDIS_URL }, hasRedis);
