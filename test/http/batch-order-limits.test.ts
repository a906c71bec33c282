import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import {
  assetNum,
  batch,
  newBuy,
  orderTenant,
  postBatch,
  product,
  type OrderTenant,
} from './order-helpers.js';

// The configurable limits of order op 5 (README, "Limits"), set low here to meet them cheaply.
let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness({
    ORDER_BATCH_LIMIT: '2',
    ARRAY_LIMIT: '4',
    INSTANCE_ROWS_LIMIT: '9',
    BODY_LIMIT_BYTES: '4096',
  });
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

async function expectRefused(body: unknown, message: string | RegExp): Promise<void> {
  const response = await postBatch(h, tenant, body);
  expect(response.statusCode).toBe(299);
  const answer = response.json() as { code: string; message: string };
  expect(answer.code).toBe('13004');
  expect(answer.message).toMatch(message);
}

async function assetCount(nums: string[]): Promise<number> {
  const rows = await h.database.db.selectFrom('assets').select('id').where('asset_num', 'in', nums).execute();
  return rows.length;
}

describe('order op 5 limits', () => {
  it('refuses more orders than a call may carry', async () => {
    const orders = [1, 2, 3].map((sequence) => newBuy({ sequence }));
    await expectRefused(batch(tenant, orders), /^orderList: must NOT have more than 2 items/);
  });

  it('refuses an array longer than the element limit', async () => {
    const nums = [1, 2, 3, 4, 5].map(() => assetNum());
    await expectRefused(
      batch(tenant, [newBuy({ assets: [{ assetNos: nums, products: [product()] }] })]),
      /^orderList\[0\]\.assets\[0\]\.assetNos: must NOT have more than 4 items/,
    );
    expect(await assetCount(nums)).toBe(0);
  });

  it('refuses a call that would copy too many products onto its asset numbers', async () => {
    const nums = [1, 2, 3, 4].map(() => assetNum());
    await expectRefused(
      batch(tenant, [newBuy({ assets: [{ assetNos: nums, products: [product(), product()] }] })]),
      /^orderList: a call may write at most 9 rows \(.*; this one: 12\)$/,
    );
    expect(await assetCount(nums)).toBe(0);
  });

  it('counts the extensions copied onto every asset number', async () => {
    // Extensions times asset numbers: the shape that once wrote 150,000 rows from a 31 KB body.
    const nums = [1, 2, 3].map(() => assetNum());
    const assetExtendList = [1, 2].map((i) => ({ extendCode: `code${i}`, extendValue: 'v' }));
    await expectRefused(
      batch(tenant, [newBuy({ assets: [{ assetNos: nums, assetExtendList, products: [product()] }] })]),
      /; this one: 12\)$/,
    );
    expect(await assetCount(nums)).toBe(0);
  });

  it('counts the features and passwords copied with every product', async () => {
    const nums = [1, 2].map(() => assetNum());
    const withEntries = product({
      productFeatures: [{ featureCode: 'seats', featureValue: '5' }],
      passwords: ['one', 'two'],
    });
    await expectRefused(
      batch(tenant, [newBuy({ assets: [{ assetNos: nums, products: [withEntries] }] })]),
      /; this one: 10\)$/,
    );
    expect(await assetCount(nums)).toBe(0);
  });

  it('accepts a call at the row limit', async () => {
    const nums = [1, 2, 3].map(() => assetNum());
    const assetExtendList = [{ extendCode: 'code', extendValue: 'v' }];
    const response = await postBatch(
      h,
      tenant,
      batch(tenant, [newBuy({ assets: [{ assetNos: nums, assetExtendList, products: [product()] }] })]),
    );
    expect(response.statusCode, response.body).toBe(200);
    expect(await assetCount(nums)).toBe(3);
  });

  it('refuses a body over the size limit, saying the limit', async () => {
    const big = newBuy({ customerName: 'x'.repeat(5000) });
    await expectRefused(batch(tenant, [big]), 'body: larger than the limit of 4096 bytes');
  });
});
