import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppInputError } from '../../src/domain/apps/apps.service.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { appIdOf, history } from './audit-helpers.js';

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

async function createApp(): Promise<{ appKey: string }> {
  const response = await admin('POST', '/apps', { name: 'runtime', scopes: ['auth_runtime'] });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { appKey: string };
}

const setDays = (appKey: string, payload: object | undefined, key = ADMIN_KEY) =>
  admin('POST', `/apps/${appKey}/offline-lease-days`, payload, key);

async function listed(appKey: string): Promise<Record<string, unknown> | undefined> {
  const apps = (await admin('GET', '/apps')).json() as Array<Record<string, unknown>>;
  return apps.find((a) => a.appKey === appKey);
}

describe('admin API: offline lease days of an app', () => {
  it('starts at 0 (none), sets it, lists it, and the runtime reads it by app id', async () => {
    const app = await createApp();
    const appId = await appIdOf(h, app.appKey);
    expect(await listed(app.appKey)).toMatchObject({ offlineLeaseMaxDays: 0 });
    expect(await h.app.services.apps.offlineLeaseMaxDays(appId)).toBe(0);

    const set = await setDays(app.appKey, { days: 30 });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ appKey: app.appKey, status: 'active', offlineLeaseMaxDays: 30 });
    expect(await listed(app.appKey)).toMatchObject({ offlineLeaseMaxDays: 30 });
    expect(await h.app.services.apps.offlineLeaseMaxDays(appId)).toBe(30);

    // Digits as a string are a number, as everywhere in the API; both bounds are allowed.
    expect((await setDays(app.appKey, { days: '365' })).json()).toMatchObject({ offlineLeaseMaxDays: 365 });
    expect((await setDays(app.appKey, { days: 0 })).json()).toMatchObject({ offlineLeaseMaxDays: 0 });
    expect(await h.app.services.apps.offlineLeaseMaxDays(appId)).toBe(0);
  });

  it('audits each change with the old and new value, and not a repeat of the same value', async () => {
    const app = await createApp();
    expect((await setDays(app.appKey, { days: 7 })).statusCode).toBe(200);
    expect((await setDays(app.appKey, { days: 7 })).statusCode).toBe(200);
    expect((await setDays(app.appKey, { days: 0 })).statusCode).toBe(200);
    const appId = await appIdOf(h, app.appKey);
    const entries = await history(h, app.appKey);
    expect(entries.map((e) => [e.action, e.operator, e.appId, e.detail])).toEqual([
      ['app.created', 'admin-api', null, expect.objectContaining({ appId })],
      ['app.offline_lease_days_set', 'admin-api', null, { appId, days: 7, previousDays: 0 }],
      ['app.offline_lease_days_set', 'admin-api', null, { appId, days: 0, previousDays: 7 }],
    ]);
    expect(entries[1]?.requestId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each<[string, object | undefined, RegExp]>([
    ['a negative number', { days: -1 }, /^days: must be >= 0/],
    ['more than a year', { days: 366 }, /^days: must be <= 365/],
    ['text', { days: 'ten' }, /^days: must be integer/],
    ['a fraction', { days: 1.5 }, /^days: must be integer/],
    ['no days', {}, /^days: is required/],
  ])('refuses %s with 400 naming days, changing nothing', async (_name, payload, message) => {
    const app = await createApp();
    const response = await setDays(app.appKey, payload);
    expect(response.statusCode, response.body).toBe(400);
    expect((response.json() as { error: string }).error).toMatch(message);
    expect(await listed(app.appKey)).toMatchObject({ offlineLeaseMaxDays: 0 });
    expect((await history(h, app.appKey)).map((e) => e.action)).toEqual(['app.created']);
  });

  it('answers 404 for an unknown app and 401 without the admin key', async () => {
    const missing = await setDays('kw_nobody', { days: 3 });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ error: 'no application kw_nobody' });

    const app = await createApp();
    expect((await setDays(app.appKey, { days: 3 }, 'wrong')).statusCode).toBe(401);
    const anonymous = await h.app.inject({
      method: 'POST',
      url: `/admin/apps/${app.appKey}/offline-lease-days`,
      payload: { days: 3 },
    });
    expect(anonymous.statusCode).toBe(401);
    expect(await listed(app.appKey)).toMatchObject({ offlineLeaseMaxDays: 0 });
  });

  it('keeps the bound in the service too, naming the field', async () => {
    const app = await createApp();
    for (const days of [-1, 366, 2.5, Number.NaN]) {
      await expect(h.app.services.apps.setOfflineLeaseMaxDays(app.appKey, days)).rejects.toThrow(
        new AppInputError('days must be a whole number from 0 to 365'),
      );
    }
    // The database refuses an out-of-range value that got past the service.
    await expect(
      h.database.db
        .updateTable('apps')
        .set({ offline_lease_max_days: 400 })
        .where('app_key', '=', app.appKey)
        .execute(),
    ).rejects.toThrow();
  });

  it('gives an unknown app id no offline lease', async () => {
    expect(await h.app.services.apps.offlineLeaseMaxDays('no-such-app')).toBe(0);
  });

  it('leaves the create answer as documented, without the setting', async () => {
    const created = await admin('POST', '/apps', { name: 'plain', scopes: ['auth_order'] });
    expect(Object.keys(created.json() as object)).toEqual([
      'appKey',
      'appSecret',
      'scopes',
      'channels',
      'status',
    ]);
  });
});
