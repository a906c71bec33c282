import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  assetNum,
  batch,
  expectFailure,
  newBuy,
  orderTenant,
  postBatch,
  product,
  productsOn,
  submit,
  type OrderResult,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

const ordersOf = (channelOrderId: string) =>
  h.database.db
    .selectFrom('license_orders')
    .select(['id', 'app_id'])
    .where('channel_order_id', '=', channelOrderId)
    .execute();

function oneLock(num: string, overrides: Record<string, unknown> = {}) {
  return batch(
    tenant,
    [newBuy({ assets: [{ assetNos: [num], products: [product({ crmProductId: 'P' })] }] })],
    overrides,
  );
}

describe('order op 5: idempotency on (app, channelCode, channelOrderId)', () => {
  it('answers a retry of the same body with the stored result and creates nothing', async () => {
    const num = assetNum();
    const body = oneLock(num);
    const first = await submit(h, tenant, body);
    const second = await submit(h, tenant, body);
    expect(second).toEqual(first);
    expect(await ordersOf(body.channelOrderId as string)).toHaveLength(1);
    expect(await productsOn(h, num)).toHaveLength(1);
  });

  it('treats digits sent as strings, nulls and key order as the same body', async () => {
    const num = assetNum();
    const body = oneLock(num);
    const first = await submit(h, tenant, body);
    const [order] = body.orderList as Array<Record<string, unknown>>;
    const reordered = {
      orderList: [{ ...order, sequence: '1', address: null }],
      syncMode: body.syncMode,
      channelOrderId: body.channelOrderId,
      channelCode: body.channelCode,
    };
    expect(await submit(h, tenant, reordered)).toEqual(first);
    expect(await productsOn(h, num)).toHaveLength(1);
  });

  it('refuses a different body under the same key with 13004', async () => {
    const body = oneLock(assetNum());
    await submit(h, tenant, body);
    const changed = oneLock(assetNum(), { channelOrderId: body.channelOrderId });
    expectFailure(
      await postBatch(h, tenant, changed),
      '13004',
      `channelOrderId: ${String(body.channelOrderId)} was already used with a different body`,
    );
    expectFailure(
      await postBatch(h, tenant, { ...body, syncMode: 'async' }),
      '13004',
      /already used with a different body/,
    );
  });

  it('keeps no record of a refused batch, so a corrected retry goes through', async () => {
    const taken = assetNum();
    await submit(h, tenant, oneLock(taken));
    const channelOrderId = uniqueCode('CO');
    expectFailure(
      await postBatch(h, tenant, oneLock(taken, { channelOrderId })),
      '13004',
      /belongs to another customer/,
    );
    const fixed = await submit(h, tenant, oneLock(assetNum(), { channelOrderId }));
    expect(fixed).toHaveLength(1);
  });

  it('scopes the key by app: another app may use the same channel order id', async () => {
    const other = await orderTenant(h);
    const channelOrderId = uniqueCode('CO');
    await submit(h, tenant, oneLock(assetNum(), { channelOrderId }));
    const theirs = batch(other, [newBuy()], { channelOrderId });
    expect(await submit(h, other, theirs)).toHaveLength(1);
    expect(new Set((await ordersOf(channelOrderId)).map((o) => o.app_id)).size).toBe(2);
  });

  it('creates one set of orders for identical requests that race', async () => {
    const num = assetNum();
    const body = oneLock(num);
    const responses = await Promise.all(Array.from({ length: 8 }, () => postBatch(h, tenant, body)));
    const results = responses.map((r) => {
      expect(r.statusCode, r.body).toBe(200);
      return (r.json() as { data: OrderResult[] }).data;
    });
    for (const r of results) expect(r).toEqual(results[0]);
    expect(await ordersOf(body.channelOrderId as string)).toHaveLength(1);
    expect(await productsOn(h, num)).toHaveLength(1);
  });
});
