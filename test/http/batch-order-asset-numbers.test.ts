import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOrderWorker } from '../../src/jobs/order-worker.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { seedAsset } from './enterprise-helpers.js';
import {
  assetNum,
  assetRow,
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  postBatch,
  product,
  submit,
  type OrderTenant,
} from './order-helpers.js';

// DOMAIN §5: a number in Keyward's format (region digit 8 or 6 + 9 digits) that does not exist
// yet may be used only if order op 9 issued it to the calling app; other formats are taken as
// given; op 9 and cloud orders skip numbers that are already assets.

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

const NOT_ISSUED = 'was not issued to this application by shellnums (order op 9)';

async function shellnums(t: OrderTenant, size: number): Promise<string[]> {
  const response = await orderCall(h, t, 'POST', '/shellnums', { size });
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { data: string[] }).data;
}

/** The number `k` after `num` in the same region's format. */
const plus = (num: string, k: number): string => String(Number(num) + k);

const lockBuy = (nums: string[], overrides: Record<string, unknown> = {}) =>
  newBuy({ assets: [{ assetNos: nums, products: [product()] }], ...overrides });

const cloudBuy = (assets: number, overrides: Record<string, unknown> = {}) =>
  newBuy({
    licenseType: 'cloud_account',
    assets: Array.from({ length: assets }, () => ({ assetNos: [], products: [product()] })),
    ...overrides,
  });

/**
 * Assets written straight to the table, as numbers taken before op 5 required issued numbers
 * were: the data an upgraded installation may hold.
 */
async function plantLegacy(customerId: string, nums: string[]): Promise<void> {
  for (const assetNum of nums) await seedAsset(h, customerId, 'normal_recover_usbkey', { assetNum });
}

/** A customer of the tenant, made by an order on a foreign-format number. */
async function customerOf(t: OrderTenant): Promise<{ customerId: string; channelCustomerId: string }> {
  const channelCustomerId = uniqueCode('cc');
  const [order] = await submit(h, t, batch(t, [lockBuy([assetNum()], { channelCustomerId })]));
  return { customerId: (order as { customerId: string }).customerId, channelCustomerId };
}

async function freshNumbersOf(licenseOrderId: string): Promise<string[]> {
  const rows = await h.database.db
    .selectFrom('product_instances as p')
    .innerJoin('assets as a', 'a.id', 'p.asset_id')
    .select('a.asset_num')
    .where('p.license_order_id', '=', licenseOrderId)
    .execute();
  return rows.map((r) => r.asset_num);
}

describe('order op 5: asset numbers in Keyward’s format come from op 9', () => {
  it('stops an app squatting the next numbers of the sequence; the victim is unaffected', async () => {
    const attacker = await orderTenant(h);
    const victim = await orderTenant(h);
    const [last] = await shellnums(attacker, 1);
    // Numbers ahead of the counter, far enough ahead that other test files drawing from the shared
    // sequence meanwhile (op 9, cloud orders) cannot have taken them as their own assets.
    const squatted = Array.from({ length: 300 }, (_, k) => plus(last as string, 50_000 + k + 1));

    const attack = await postBatch(h, attacker, batch(attacker, [lockBuy(squatted)]));
    expectFailure(attack, '13004', `orderList[sequence=1].assets[0].assetNos[0]: ${NOT_ISSUED}`);
    expect(await assetRow(h, squatted[0] as string)).toBeUndefined();

    // The victim's numbers and its cloud orders, which draw from the same sequence, all work.
    const issued = await shellnums(victim, 20);
    const [bought] = await submit(h, victim, batch(victim, [lockBuy(issued)]));
    for (const n of issued) {
      expect((await assetRow(h, n))?.customer_id).toBe((bought as { customerId: string }).customerId);
    }
    const [cloud] = await submit(h, victim, batch(victim, [cloudBuy(3)]));
    expect(await freshNumbersOf((cloud as { licenseOrderId: string }).licenseOrderId)).toHaveLength(3);
  });

  it('answers another channel’s bought number exactly as one never issued, telling nothing of its owner', async () => {
    const owner = await orderTenant(h);
    const stranger = await orderTenant(h);
    const [bought] = await shellnums(owner, 1);
    const [never] = await shellnums(stranger, 1);
    await submit(h, owner, batch(owner, [lockBuy([bought as string])]));
    const unissued = plus(never as string, 900_000);
    const onBought = await postBatch(h, stranger, batch(stranger, [lockBuy([bought as string])]));
    const onUnissued = await postBatch(h, stranger, batch(stranger, [lockBuy([unissued])]));
    const field = 'orderList[sequence=1].assets[0].assetNos[0]';
    expectFailure(onBought, '13004', `${field}: ${NOT_ISSUED}`);
    expectFailure(onUnissued, '13004', `${field}: ${NOT_ISSUED}`);
    // A foreign lock's number another channel holds: unavailable, not whose.
    const foreign = assetNum();
    await submit(h, owner, batch(owner, [lockBuy([foreign])]));
    expectFailure(
      await postBatch(h, stranger, batch(stranger, [lockBuy([foreign])])),
      '13004',
      `${field}: is not available to this application`,
    );
  });

  it('accepts a number issued to the calling app', async () => {
    const [num] = await shellnums(tenant, 1);
    const [order] = await submit(h, tenant, batch(tenant, [lockBuy([num as string])]));
    expect((await assetRow(h, num as string))?.customer_id).toBe(
      (order as { customerId: string }).customerId,
    );
  });

  it('refuses a number issued to another app with 13004 naming the field, and writes nothing', async () => {
    const other = await orderTenant(h);
    const [theirs] = await shellnums(other, 1);
    const mine = await shellnums(tenant, 2);
    const body = batch(tenant, [
      lockBuy([mine[0] as string]),
      newBuy({
        sequence: 2,
        assets: [
          { assetNos: [assetNum()], products: [product()] },
          { assetNos: [mine[1] as string, theirs as string], products: [product()] },
        ],
      }),
    ]);
    expectFailure(
      await postBatch(h, tenant, body),
      '13004',
      `orderList[sequence=2].assets[1].assetNos[1]: ${NOT_ISSUED}`,
    );
    for (const n of [...mine, theirs as string]) expect(await assetRow(h, n)).toBeUndefined();
    // Still the other app's to use.
    await submit(h, other, batch(other, [lockBuy([theirs as string])]));
  });

  it('refuses numbers of either region’s format that were never issued', async () => {
    const [last] = await shellnums(tenant, 1);
    const ahead = plus(last as string, 500_000);
    const otherRegion = `6${String(randomInt(1, 999_999_999)).padStart(9, '0')}`;
    for (const num of [ahead, otherRegion, '8000000000']) {
      expectFailure(
        await postBatch(h, tenant, batch(tenant, [lockBuy([num])])),
        '13004',
        `orderList[sequence=1].assets[0].assetNos[0]: ${NOT_ISSUED}`,
      );
    }
  });

  it('takes numbers of other formats as given', async () => {
    const digits = () => String(randomInt(0, 999_999_999)).padStart(9, '0');
    const foreign = [`7${digits()}`, `8${digits()}0`, digits(), assetNum('SH'), `8-${digits()}`];
    const [order] = await submit(h, tenant, batch(tenant, [lockBuy(foreign)]));
    for (const n of foreign) {
      expect((await assetRow(h, n))?.customer_id).toBe((order as { customerId: string }).customerId);
    }
  });

  it('lets the owner order again on its numbers, issued or held from before', async () => {
    const { customerId, channelCustomerId } = await customerOf(tenant);
    const [issued] = await shellnums(tenant, 1);
    const legacy = plus((await shellnums(tenant, 1))[0] as string, 700_000);
    await plantLegacy(customerId, [legacy]);
    await submit(h, tenant, batch(tenant, [lockBuy([issued as string], { channelCustomerId })]));
    const again = await submit(
      h,
      tenant,
      batch(tenant, [lockBuy([issued as string, legacy], { channelCustomerId })]),
    );
    expect(again[0]?.customerId).toBe(customerId);
    // Another customer still meets the number's owner.
    expectFailure(
      await postBatch(h, tenant, batch(tenant, [lockBuy([legacy])])),
      '13004',
      'orderList[sequence=1].assets[0].assetNos[0]: belongs to another customer',
    );
  });

  it('refuses an unissued number in an async batch by failing the order', async () => {
    const [last] = await shellnums(tenant, 1);
    const num = plus(last as string, 600_000);
    const [order] = await submit(h, tenant, batch(tenant, [lockBuy([num])], { syncMode: 'async' }));
    const worker = startOrderWorker(h.app.services.orders, h.app.log, { pollMs: 20 });
    try {
      let status = { status: 'pending', reason: null as string | null };
      for (let i = 0; i < 400 && status.status === 'pending'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        const response = await orderCall(h, tenant, 'GET', `/licenseOrder/${order?.licenseOrderId}`);
        status = (response.json() as { data: typeof status }).data;
      }
      expect(status).toMatchObject({
        status: 'failed',
        reason: `orderList[sequence=1].assets[0].assetNos[0]: ${NOT_ISSUED}`,
      });
    } finally {
      await worker.stop();
    }
    expect(await assetRow(h, num)).toBeUndefined();
  });
});

describe('the sequence skips numbers that are already assets', () => {
  it('in op 9 and in cloud orders', async () => {
    const { customerId } = await customerOf(tenant);
    const [last] = await shellnums(tenant, 1);
    const taken = [1, 2, 4, 5].map((k) => plus(last as string, k));
    await plantLegacy(customerId, taken);

    const issued = await shellnums(tenant, 6);
    expect(issued).toHaveLength(6);
    expect(new Set(issued).size).toBe(6);
    expect(issued.filter((n) => taken.includes(n))).toEqual([]);
    expect(issued).toEqual([...issued].sort());

    const next = (await shellnums(tenant, 1))[0] as string;
    const takenAgain = [1, 2].map((k) => plus(next, k));
    await plantLegacy(customerId, takenAgain);
    const [cloud] = await submit(h, tenant, batch(tenant, [cloudBuy(3)]));
    const fresh = await freshNumbersOf((cloud as { licenseOrderId: string }).licenseOrderId);
    expect(fresh).toHaveLength(3);
    expect(fresh.filter((n) => takenAgain.includes(n))).toEqual([]);
  });

  it('under concurrent draws of op 9 and cloud orders', async () => {
    const { customerId } = await customerOf(tenant);
    const [last] = await shellnums(tenant, 1);
    const taken = Array.from({ length: 40 }, (_, k) => plus(last as string, 2 * k + 1));
    await plantLegacy(customerId, taken);

    const [draws, orders] = await Promise.all([
      Promise.all(Array.from({ length: 12 }, () => shellnums(tenant, 8))),
      Promise.all(Array.from({ length: 6 }, () => submit(h, tenant, batch(tenant, [cloudBuy(2)])))),
    ]);
    const fresh = (
      await Promise.all(orders.map(([o]) => freshNumbersOf((o as { licenseOrderId: string }).licenseOrderId)))
    ).flat();
    const all = [...draws.flat(), ...fresh];
    expect(all).toHaveLength(12 * 8 + 6 * 2);
    expect(new Set(all).size).toBe(all.length);
    expect(all.filter((n) => taken.includes(n))).toEqual([]);
  });
});
