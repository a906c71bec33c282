import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CLIENT_KEY } from '../../src/domain/console/console-client.js';
import { onPostgres } from '../support/database.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { assetWorld, type AssetWorld } from '../support/order-fixtures.js';
import { appIdOf, history } from './audit-helpers.js';

// `POST /admin/apps/:appKey/settings` (`keyward app set`), and the console's own client, which the
// admin API changes only with `"force": true`.

let h: Harness;
let world: AssetWorld;
beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

const admin = (method: 'GET' | 'POST', url: string, payload?: object, key = ADMIN_KEY) =>
  h.app.inject({
    method,
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${key}` },
    ...(payload === undefined ? {} : { payload }),
  });

async function createApp(channels: string[] = ['RT']): Promise<{ appKey: string }> {
  const response = await admin('POST', '/apps', { name: 'runtime', scopes: ['auth_runtime'], channels });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { appKey: string };
}

async function listed(appKey: string): Promise<Record<string, unknown> | undefined> {
  const apps = (await admin('GET', '/apps')).json() as Array<Record<string, unknown>>;
  return apps.find((a) => a.appKey === appKey);
}

const settings = (appKey: string, payload?: object, key = ADMIN_KEY) =>
  admin('POST', `/apps/${appKey}/settings`, payload, key);

describe('admin API: offline early return', () => {
  it('is off by default; set, listed, read by the runtime by app id, audited once per change', async () => {
    const app = await createApp();
    const appId = await appIdOf(h, app.appKey);
    expect(await listed(app.appKey)).toMatchObject({ offlineEarlyReturn: false, restrictToChannels: false });
    expect(await h.app.services.apps.offlineEarlyReturn(appId)).toBe(false);

    const set = await settings(app.appKey, { offlineEarlyReturn: true });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({
      appKey: app.appKey,
      offlineEarlyReturn: true,
      restrictToChannels: false,
    });
    expect(await listed(app.appKey)).toMatchObject({ offlineEarlyReturn: true });
    expect(await h.app.services.apps.offlineEarlyReturn(appId)).toBe(true);
    expect((await settings(app.appKey, { offlineEarlyReturn: true })).statusCode).toBe(200);
    expect((await settings(app.appKey, { offlineEarlyReturn: false })).statusCode).toBe(200);

    const entries = await history(h, app.appKey);
    expect(entries.map((e) => [e.action, e.operator, e.detail])).toEqual([
      ['app.created', 'admin-api', expect.objectContaining({ appId })],
      ['app.offline_early_return_set', 'admin-api', { appId, offlineEarlyReturn: true, previous: false }],
      ['app.offline_early_return_set', 'admin-api', { appId, offlineEarlyReturn: false, previous: true }],
    ]);
    expect(entries[1]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('changes both settings in one call, one audit row each', async () => {
    const app = await createApp();
    const set = await settings(app.appKey, { offlineEarlyReturn: true, restrictToChannels: true });
    expect(set.json()).toMatchObject({ offlineEarlyReturn: true, restrictToChannels: true });
    expect((await history(h, app.appKey)).map((e) => e.action)).toEqual([
      'app.created',
      'app.offline_early_return_set',
      'app.channel_restriction_set',
    ]);
  });

  it.each<[string, object | undefined, RegExp]>([
    [
      'no setting',
      {},
      /^body: give at least one setting: offlineEarlyReturn, restrictToChannels, rateLimitPerMinute$/,
    ],
    ['only force', { force: true }, /^body: give at least one setting/],
    ['text for a boolean', { offlineEarlyReturn: 'yes' }, /^offlineEarlyReturn: must be boolean/],
    ['an unknown setting', { offlineEarlyReturn: true, seats: 3 }, /seats/],
  ])('refuses %s with 400, changing nothing', async (_name, payload, message) => {
    const app = await createApp();
    const response = await settings(app.appKey, payload);
    expect(response.statusCode, response.body).toBe(400);
    expect((response.json() as { error: string }).error).toMatch(message);
    expect(await listed(app.appKey)).toMatchObject({ offlineEarlyReturn: false, restrictToChannels: false });
    expect((await history(h, app.appKey)).map((e) => e.action)).toEqual(['app.created']);
  });

  it('answers 404 for an unknown app and 401 without the admin key', async () => {
    expect((await settings('kw_nobody', { offlineEarlyReturn: true })).json()).toEqual({
      error: 'no application kw_nobody',
    });
    const app = await createApp();
    expect((await settings(app.appKey, { offlineEarlyReturn: true }, 'wrong')).statusCode).toBe(401);
    expect(await listed(app.appKey)).toMatchObject({ offlineEarlyReturn: false });
  });
});

describe('admin API: the console client keyward-console', () => {
  const everyEnterprise = /keyward-console is the console's own sign-in client.*every enterprise/;

  async function consoleClient() {
    const row = await h.database.db
      .selectFrom('apps')
      .select(['status', 'secret_hash', 'offline_lease_max_days', 'offline_early_return'])
      .where('app_key', '=', CONSOLE_CLIENT_KEY)
      .executeTakeFirstOrThrow();
    return row;
  }

  it.each<[string, string, object | undefined, RegExp]>([
    ['disable', '/disable', undefined, /disabling it ends console sign-in for every enterprise/],
    ['disable with force false', '/disable', { force: false }, /disabling it ends console sign-in/],
    ['rotate-secret', '/rotate-secret', { revokeTokens: true }, /ends console sign-in for every enterprise/],
    ['offline days', '/offline-lease-days', { days: 3 }, /can end console sign-in for every enterprise/],
    ['settings', '/settings', { offlineEarlyReturn: true }, /can end console sign-in for every enterprise/],
  ])(
    'refuses %s without force with 409, saying every enterprise sign-in ends',
    async (_n, path, body, why) => {
      const before = await consoleClient();
      const audited = (await history(h, CONSOLE_CLIENT_KEY)).length;
      const refused = await admin('POST', `/apps/${CONSOLE_CLIENT_KEY}${path}`, body);
      expect(refused.statusCode, refused.body).toBe(409);
      const { error } = refused.json() as { error: string };
      expect(error).toMatch(everyEnterprise);
      expect(error).toMatch(why);
      expect(error).toContain('--force on the CLI, "force": true in the admin API\'s body');
      expect(await consoleClient()).toEqual(before);
      expect(await history(h, CONSOLE_CLIENT_KEY)).toHaveLength(audited);
      // Enterprise administrators still sign in.
      const signIn = await h.app.services.consoleSessions.signInEnterprise(
        world.admin.account,
        world.admin.password,
        {
          ip: '192.0.2.10',
          requestId: 'test',
          clientRequestId: null,
        },
      );
      expect(signIn.status).toBe('ok');
    },
  );

  it('changes it with force, audited as forced', async () => {
    const set = await admin('POST', `/apps/${CONSOLE_CLIENT_KEY}/offline-lease-days`, {
      days: 1,
      force: true,
    });
    expect(set.statusCode, set.body).toBe(200);
    const back = await admin('POST', `/apps/${CONSOLE_CLIENT_KEY}/offline-lease-days`, {
      days: 0,
      force: true,
    });
    expect(back.json()).toMatchObject({ appKey: CONSOLE_CLIENT_KEY, offlineLeaseMaxDays: 0 });
    const rows = (await history(h, CONSOLE_CLIENT_KEY)).filter(
      (e) => e.action === 'app.offline_lease_days_set',
    );
    expect(rows.slice(-2).map((e) => e.detail)).toEqual([
      expect.objectContaining({ days: 1, previousDays: 0, forced: true }),
      expect.objectContaining({ days: 0, previousDays: 1, forced: true }),
    ]);
  });

  it('asks no force for a channel app', async () => {
    const app = await createApp();
    const disabled = await admin('POST', `/apps/${app.appKey}/disable`);
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect((await history(h, app.appKey)).at(-1)?.detail).not.toHaveProperty('forced');
  });

  // Ends console sign-in for the whole database: on PostgreSQL every test file shares it.
  it.skipIf(onPostgres())('disables it with force, which ends every enterprise sign-in', async () => {
    const disabled = await admin('POST', `/apps/${CONSOLE_CLIENT_KEY}/disable`, { force: true });
    expect(disabled.statusCode, disabled.body).toBe(200);
    expect(disabled.json()).toMatchObject({ appKey: CONSOLE_CLIENT_KEY, status: 'disabled' });
    expect((await history(h, CONSOLE_CLIENT_KEY)).at(-1)).toMatchObject({
      action: 'app.disabled',
      detail: expect.objectContaining({ forced: true }),
    });
    const signIn = await h.app.services.consoleSessions.signInEnterprise(
      world.admin.account,
      world.admin.password,
      {
        ip: '192.0.2.11',
        requestId: 'test',
        clientRequestId: null,
      },
    );
    expect(signIn.status).toBe('unavailable');
  });
});
