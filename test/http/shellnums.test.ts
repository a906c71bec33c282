import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

let h: Harness;
let app: TestApp;
let token: string;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_order'] });
  token = await appToken(h, app);
});
afterAll(async () => h.close());

const shellnums = (payload: unknown) =>
  h.app.inject({
    method: 'POST',
    url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${token}` },
    payload: payload as object,
  });

describe('order op 9: obtain asset numbers', () => {
  it('issues distinct 10-digit numbers with the domestic region digit', async () => {
    const response = await shellnums({ size: 5 });
    expect(response.statusCode).toBe(200);
    const body = response.json() as { code: number; message: string; data: string[] };
    expect(body.code).toBe(0);
    expect(body.message).toBe('success');
    expect(body.data).toHaveLength(5);
    expect(new Set(body.data).size).toBe(5);
    for (const n of body.data) expect(n).toMatch(/^8[0-9]{9}$/);
  });

  it('accepts the size as a string of digits', async () => {
    const body = (await shellnums({ size: '3' })).json() as { data: string[] };
    expect(body.data).toHaveLength(3);
  });

  it('records the numbers, in order, as one issue to the app', async () => {
    const body = (await shellnums({ size: 3 })).json() as { data: string[] };
    expect(body.data).toEqual([...body.data].sort());
    const runs = await h.database.db
      .selectFrom('issued_asset_number_runs')
      .innerJoin('apps', 'apps.id', 'issued_asset_number_runs.app_id')
      .select(['apps.app_key', 'issued_asset_number_runs.asset_nums'])
      .where(sql<boolean>`${body.data[0]} = any(asset_nums)`)
      .execute();
    expect(runs).toEqual([{ app_key: app.appKey, asset_nums: body.data }]);
  });

  it.each([
    [{ size: 0 }, 'size: must be >= 1'],
    [{ size: 1001 }, 'size: must be <= 1000'],
    [{ size: 'ten' }, 'size: must be integer'],
    [{ size: 1.5 }, 'size: must be integer'],
    [{}, 'size: is required'],
  ])('refuses %j with 13004 naming the field', async (payload, message) => {
    const response = await shellnums(payload);
    expect(response.statusCode).toBe(299);
    expect(response.json()).toMatchObject({ code: '13004', message });
  });

  it('never hands out one number twice to 50 concurrent calls', async () => {
    const responses = await Promise.all(Array.from({ length: 50 }, () => shellnums({ size: 20 })));
    const all = responses.flatMap((r) => (r.json() as { data: string[] }).data);
    expect(all).toHaveLength(1000);
    expect(new Set(all).size).toBe(1000);
  });
});

describe('order op 9 in Singapore', () => {
  it('uses region digit 6', async () => {
    const sg = await startHarness({ REGION: 'sg' });
    try {
      const sgApp = await createTestApp(sg, { scopes: ['auth_order'] });
      const response = await sg.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${await appToken(sg, sgApp)}` },
        payload: { size: 1 },
      });
      expect((response.json() as { data: string[] }).data[0]).toMatch(/^6[0-9]{9}$/);
    } finally {
      await sg.close();
    }
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/shellnums`,
  payload: () => ({ size: 1 }),
});
