import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.repository.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { ADMIN_KEY, nonce, startHarness, type Harness } from '../support/harness.js';
import {
  assetNum,
  assetRow,
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  product,
  submit,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

/** One asset of `licenseType` bought by a fresh customer of `t`; returns its number and customer. */
async function own(licenseType: string, t: OrderTenant = tenant) {
  const num = assetNum();
  const [order] = await submit(
    h,
    t,
    batch(t, [newBuy({ licenseType, assets: [{ assetNos: [num], products: [product()] }] })]),
  );
  return { num, customerId: order?.customerId as string, licenseOrderId: order?.licenseOrderId as string };
}

type Outcome = { assetNum: string; status: number };

async function switchLocks(op: 'lock' | 'unlock', assetNums: unknown, operatorIdentity?: unknown) {
  return orderCall(h, tenant, 'POST', `/asset/${op}`, { assetNums, operatorIdentity });
}

async function outcomes(op: 'lock' | 'unlock', assetNums: string[]): Promise<Outcome[]> {
  const response = await switchLocks(op, assetNums, 'ops@example.com');
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { data: Outcome[] }).data;
}

async function audit(subject: string): Promise<AuditRecord[]> {
  const response = await h.app.inject({
    method: 'GET',
    url: `/admin/audit?subject=${subject}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
  return response.json() as AuditRecord[];
}

describe('order ops 6–7: disable and enable physical locks', () => {
  it.each(['normal_recover_usbkey', 'normal_recover_lan_usbkey', 'lk_product_usbkey', 'lk_auth_usbkey'])(
    'locks and unlocks a %s, auditing each change once',
    async (licenseType) => {
      const { num } = await own(licenseType);
      expect(await outcomes('lock', [num])).toEqual([{ assetNum: num, status: 1 }]);
      expect((await assetRow(h, num))?.locked).toBe(true);
      // Already locked: done, and nothing more to audit.
      expect(await outcomes('lock', [num])).toEqual([{ assetNum: num, status: 1 }]);
      expect(await outcomes('unlock', [num])).toEqual([{ assetNum: num, status: 1 }]);
      expect((await assetRow(h, num))?.locked).toBe(false);
      const entries = await audit(num);
      expect(entries.map((e) => e.action)).toEqual(['asset.unlock', 'asset.lock']);
      const app = await h.database.db
        .selectFrom('apps')
        .select('id')
        .where('app_key', '=', tenant.app.appKey)
        .executeTakeFirstOrThrow();
      for (const e of entries) {
        expect(e).toMatchObject({
          appId: app.id,
          operator: 'ops@example.com',
          subject: num,
          requestId: expect.any(String),
        });
        expect(e.createdAt).toEqual(expect.any(Number));
      }
    },
  );

  it('answers every number in order: 2 unknown, 3 revoked, 4 of another type', async () => {
    const lockable = await own('normal_recover_usbkey');
    const wrongType = await own('normal_unrecover_usbkey');
    const certificate = await own('softkey');
    const revoked = await own('lk_auth_usbkey');
    await submit(
      h,
      tenant,
      batch(tenant, [
        {
          sequence: 1,
          customerId: revoked.customerId,
          licenseType: 'lk_auth_usbkey',
          orderType: 'delete_asset',
          assets: [{ assetNos: [revoked.num] }],
        },
      ]),
    );
    const nums = [lockable.num, 'K-unknown', wrongType.num, certificate.num, revoked.num, lockable.num];
    expect(await outcomes('lock', nums)).toEqual([
      { assetNum: lockable.num, status: 1 },
      { assetNum: 'K-unknown', status: 2 },
      { assetNum: wrongType.num, status: 4 },
      { assetNum: certificate.num, status: 4 },
      { assetNum: revoked.num, status: 3 },
      { assetNum: lockable.num, status: 1 },
    ]);
    expect((await assetRow(h, wrongType.num))?.locked).toBe(false);
    expect((await assetRow(h, revoked.num))?.locked).toBe(false);
    expect(await audit(lockable.num)).toHaveLength(1);
  });

  it('changes and audits each lock once when calls race over the same locks in any order', async () => {
    const nums: string[] = [];
    for (let i = 0; i < 6; i += 1) nums.push((await own('normal_recover_usbkey')).num);
    const orders = [nums, [...nums].reverse(), [...nums.slice(3), ...nums.slice(0, 3)]];
    const answers = await Promise.all(
      Array.from({ length: 9 }, (_, i) => outcomes('lock', orders[i % orders.length] ?? nums)),
    );
    for (const answer of answers) expect(answer.every((o) => o.status === 1)).toBe(true);
    for (const num of nums) {
      expect((await assetRow(h, num))?.locked).toBe(true);
      expect((await audit(num)).map((e) => e.action)).toEqual(['asset.lock']);
    }
  });

  it("audits the server's own request id, keeping a caller's id apart and only when sane", async () => {
    const { num } = await own('normal_recover_usbkey');
    const sendAs = async (op: 'lock' | 'unlock', clientId: string) => {
      const response = await h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/asset/${op}?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${tenant.token}`, 'x-request-id': clientId },
        payload: { assetNums: [num], operatorIdentity: 'ops' },
      });
      expect(response.statusCode, response.body).toBe(200);
      return response.headers['x-request-id'];
    };
    const ids = [await sendAs('lock', 'same-id'), await sendAs('unlock', 'same-id')];
    const odd = 'x'.repeat(200);
    ids.push(await sendAs('lock', odd), await sendAs('unlock', 'two words'));
    const entries = (await audit(num)).reverse();
    const serverIds = entries.map((e) => e.requestId);
    // The caller's id is echoed, never taken as ours: each row has its own server id.
    expect(ids.slice(0, 2)).toEqual(['same-id', 'same-id']);
    expect(new Set(serverIds).size).toBe(4);
    expect(serverIds.every((id) => /^[0-9a-f-]{36}$/.test(id ?? ''))).toBe(true);
    // Without a sane id of the caller's, the header is the server's id of that call.
    expect(serverIds.slice(2)).toEqual(ids.slice(2));
    expect(entries.map((e) => e.clientRequestId)).toEqual(['same-id', 'same-id', null, null]);
  });

  it("treats another app's lock as no lock at all", async () => {
    const other = await orderTenant(h);
    const theirs = await own('normal_recover_usbkey', other);
    expect(await outcomes('lock', [theirs.num])).toEqual([{ assetNum: theirs.num, status: 2 }]);
    expect(await outcomes('unlock', [theirs.num])).toEqual([{ assetNum: theirs.num, status: 2 }]);
    expect((await assetRow(h, theirs.num))?.locked).toBe(false);
    expect(await audit(theirs.num)).toEqual([]);
  });

  it.each<[string, unknown, unknown, string | RegExp]>([
    ['no numbers', [], 'ops', /^assetNums: must NOT have fewer than 1 items/],
    [
      'more than 1,000 numbers',
      Array.from({ length: 1001 }, (_, i) => `K${i}`),
      'ops',
      /^assetNums: must NOT have more than 1000 items/,
    ],
    ['no operatorIdentity', ['K1'], undefined, 'operatorIdentity: is required'],
    ['a blank operatorIdentity', ['K1'], '   ', 'operatorIdentity: must not be empty'],
    ['numbers that are not strings', [1], 'ops', /^assetNums\[0\]: /],
  ])('refuses %s with 13004', async (_name, assetNums, operatorIdentity, message) => {
    for (const op of ['lock', 'unlock'] as const) {
      expectFailure(await switchLocks(op, assetNums, operatorIdentity), '13004', message);
    }
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/asset/lock`,
  payload: () => ({ assetNums: ['K1'], operatorIdentity: 'ops' }),
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/asset/unlock`,
  payload: () => ({ assetNums: ['K1'], operatorIdentity: 'ops' }),
});
