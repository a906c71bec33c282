import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedEnterprise } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  assetNum,
  assetRow,
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

/** A customer holding `nums` (one refillable lock each) with the given products, bought in one order. */
async function buy(
  nums: string[],
  products: Array<Record<string, unknown>>,
  extra: Record<string, unknown> = {},
): Promise<OrderResult> {
  const [result] = await submit(
    h,
    tenant,
    batch(tenant, [newBuy({ assets: [{ assetNos: nums, products, merchandises: [] }], ...extra })]),
  );
  return result as OrderResult;
}

const revoke = (
  customerId: string,
  orderType: 'delete_asset' | 'delete_product',
  assets: unknown[],
  extra: Record<string, unknown> = {},
) =>
  postBatch(
    h,
    tenant,
    batch(tenant, [
      { sequence: 5, customerId, licenseType: 'normal_recover_usbkey', orderType, assets, ...extra },
    ]),
  );

const live = async (num: string) => (await productsOn(h, num)).filter((p) => !p.revoked);

describe('order op 5: delete_asset', () => {
  it('revokes the assets with their products, merchandise and assignments', async () => {
    const [num, kept] = [assetNum(), assetNum()];
    const bought = await buy([num, kept], [product(), product()]);
    const [{ licenseOrderId } = { licenseOrderId: '' }] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          customerId: bought.customerId,
          assets: [
            {
              assetNos: [num],
              merchandises: [{ merchandiseNum: 'PKG', licenseOrderProductList: [product()] }],
            },
          ],
        }),
      ]),
    );
    expect(licenseOrderId).not.toBe('');
    const enterprise = await seedEnterprise(h);
    const asset = await assetRow(h, num);
    await h.database.db
      .insertInto('asset_assignments')
      .values({
        asset_id: asset?.id as string,
        member_id: (
          await h.database.db
            .selectFrom('members')
            .select('id')
            .where('global_id', '=', enterprise.adminGlobalId)
            .executeTakeFirstOrThrow()
        ).id,
      })
      .execute();

    const response = await revoke(bought.customerId, 'delete_asset', [{ assetNos: [num] }]);
    expect(response.statusCode, response.body).toBe(200);

    expect((await assetRow(h, num))?.revoked).toBe(true);
    expect(await live(num)).toEqual([]);
    const merchandise = await h.database.db
      .selectFrom('merchandise_instances')
      .select('revoked')
      .where('asset_id', '=', asset?.id as string)
      .execute();
    expect(merchandise).toEqual([{ revoked: true }]);
    const assignment = await h.database.db
      .selectFrom('asset_assignments')
      .select('asset_id')
      .where('asset_id', '=', asset?.id as string)
      .execute();
    expect(assignment).toEqual([]);
    expect((await assetRow(h, kept))?.revoked).toBe(false);
    expect(await live(kept)).toHaveLength(2);
  });

  it("refuses a number that is not the customer's, or already revoked, as if it did not exist", async () => {
    const mine = await buy([assetNum()], [product()]);
    const theirs = assetNum();
    await buy([theirs], [product()]);
    for (const num of [theirs, 'K-never-issued']) {
      expectFailure(
        await revoke(mine.customerId, 'delete_asset', [{ assetNos: [num] }]),
        '13004',
        'orderList[sequence=5].assets[0].assetNos[0]: no such asset of this customer',
      );
    }
    const gone = assetNum();
    const owner = await buy([gone], [product()]);
    expect((await revoke(owner.customerId, 'delete_asset', [{ assetNos: [gone] }])).statusCode).toBe(200);
    expectFailure(
      await revoke(owner.customerId, 'delete_asset', [{ assetNos: [gone] }]),
      '13004',
      'orderList[sequence=5].assets[0].assetNos[0]: no such asset of this customer',
    );
  });

  it('refuses a customer nobody knows', async () => {
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [
          {
            sequence: 1,
            channelCustomerId: uniqueCode('x'),
            licenseType: 'softkey',
            orderType: 'delete_asset',
            assets: [{ assetNos: ['K1'] }],
          },
        ]),
      ),
      '13004',
      'orderList[sequence=1].customerId: no customer matches customerId, channelCustomerId or crmCustomerId',
    );
  });

  it('with srcLicenseOrderId, revokes only assets that order touched', async () => {
    const [first, second] = [assetNum(), assetNum()];
    const one = await buy([first], [product()]);
    const two = await buy([second], [product()], { customerId: one.customerId, channelCustomerId: null });
    expectFailure(
      await revoke(one.customerId, 'delete_asset', [{ assetNos: [first, second] }], {
        srcLicenseOrderId: one.licenseOrderId,
      }),
      '13004',
      `orderList[sequence=5].assets[0].assetNos[1]: holds nothing of license order ${one.licenseOrderId}`,
    );
    expect((await assetRow(h, first))?.revoked).toBe(false);
    const ok = await revoke(one.customerId, 'delete_asset', [{ assetNos: [second] }], {
      srcLicenseOrderId: two.licenseOrderId,
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect((await assetRow(h, second))?.revoked).toBe(true);
    expectFailure(
      await revoke(one.customerId, 'delete_asset', [{ assetNos: [first] }], {
        srcLicenseOrderId: 'no-such-order',
      }),
      '13004',
      'orderList[sequence=5].srcLicenseOrderId: no such license order of this customer',
    );
  });

  it('gives a revoked number back to its customer on a new purchase', async () => {
    const num = assetNum();
    const owner = await buy([num], [product()]);
    expect((await revoke(owner.customerId, 'delete_asset', [{ assetNos: [num] }])).statusCode).toBe(200);
    await buy([num], [product({ crmProductId: 'again' })], {
      customerId: owner.customerId,
      channelCustomerId: null,
    });
    expect((await assetRow(h, num))?.revoked).toBe(false);
    expect((await live(num)).map((p) => p.crm_product_id)).toEqual(['again']);
  });
});

describe('order op 5: delete_product', () => {
  it('matches by crmProductId, else by productUri, without strictness', async () => {
    const num = assetNum();
    const owner = await buy(
      [num],
      [
        product({ crmProductId: 'C-1', productUri: 'uri-a' }),
        product({ crmProductId: 'C-2', productUri: 'uri-b' }),
        product({ crmProductId: 'C-3', productUri: 'uri-b' }),
        product({ crmProductId: 'C-4', productUri: 'uri-c' }),
      ],
    );
    const response = await revoke(owner.customerId, 'delete_product', [
      {
        assetNos: [num],
        products: [
          {
            crmProductId: 'C-1',
            productUri: 'uri-c',
            limitStartDate: 1,
            limitEndDate: 2,
            limitConcurrent: 99,
          },
          { productUri: 'uri-b' },
        ],
      },
    ]);
    expect(response.statusCode, response.body).toBe(200);
    expect((await live(num)).map((p) => p.crm_product_id)).toEqual(['C-4']);
  });

  it('with strictMatchWhenDelete, also matches start, end and node count, not limitAmount', async () => {
    const num = assetNum();
    const owner = await buy(
      [num],
      [
        product({
          crmProductId: 'S',
          limitStartDate: 100,
          limitEndDate: 200,
          limitConcurrent: 2,
          limitAmount: 10,
        }),
        product({ crmProductId: 'S', limitStartDate: 100, limitEndDate: 300, limitConcurrent: 2 }),
      ],
    );
    const strict = (overrides: Record<string, unknown>) =>
      revoke(owner.customerId, 'delete_product', [
        {
          assetNos: [num],
          products: [
            {
              crmProductId: 'S',
              limitStartDate: 100,
              limitEndDate: 200,
              limitConcurrent: 2,
              strictMatchWhenDelete: true,
              ...overrides,
            },
          ],
        },
      ]);
    for (const miss of [
      { limitStartDate: 101 },
      { limitEndDate: 250 },
      { limitConcurrent: 3 },
      { limitConcurrent: null },
    ]) {
      expectFailure(
        await strict(miss),
        '13004',
        `orderList[sequence=5].assets[0].products[0]: matches no product on asset ${num}`,
      );
    }
    expect(await live(num)).toHaveLength(2);
    expect((await strict({ limitAmount: 99 })).statusCode).toBe(200);
    expect((await live(num)).map((p) => p.limit_end_time)).toEqual([300]);
  });

  it('restricted by srcLicenseOrderId, leaves other orders’ instances alone; without it, removes all', async () => {
    const num = assetNum();
    const first = await buy([num], [product({ crmProductId: 'R' })]);
    await buy([num], [product({ crmProductId: 'R' })], {
      customerId: first.customerId,
      channelCustomerId: null,
    });
    const scoped = await revoke(
      first.customerId,
      'delete_product',
      [{ assetNos: [num], products: [{ crmProductId: 'R' }] }],
      { srcLicenseOrderId: first.licenseOrderId },
    );
    expect(scoped.statusCode, scoped.body).toBe(200);
    const left = await live(num);
    expect(left).toHaveLength(1);
    expect(left[0]?.license_order_id).not.toBe(first.licenseOrderId);
    expectFailure(
      await revoke(
        first.customerId,
        'delete_product',
        [{ assetNos: [num], products: [{ crmProductId: 'R' }] }],
        {
          srcLicenseOrderId: first.licenseOrderId,
        },
      ),
      '13004',
      `orderList[sequence=5].assets[0].products[0]: matches no product on asset ${num} from license order ${first.licenseOrderId}`,
    );

    const other = assetNum();
    const owner = await buy([other], [product({ crmProductId: 'Q' })]);
    await buy([other], [product({ crmProductId: 'Q' })], {
      customerId: owner.customerId,
      channelCustomerId: null,
    });
    expect(
      (
        await revoke(owner.customerId, 'delete_product', [
          { assetNos: [other], products: [{ crmProductId: 'Q' }] },
        ])
      ).statusCode,
    ).toBe(200);
    expect(await live(other)).toEqual([]);
  });

  it('revokes nothing when one listed product matches nothing', async () => {
    const num = assetNum();
    const owner = await buy([num], [product({ crmProductId: 'A' })]);
    expectFailure(
      await revoke(owner.customerId, 'delete_product', [
        { assetNos: [num], products: [{ crmProductId: 'A' }, { crmProductId: 'B' }] },
      ]),
      '13004',
      `orderList[sequence=5].assets[0].products[1]: matches no product on asset ${num}`,
    );
    expect(await live(num)).toHaveLength(1);
  });

  it('needs crmProductId or productUri to find a product', async () => {
    expectFailure(
      await revoke('any', 'delete_product', [{ assetNos: ['K1'], products: [{ productName: 'x' }] }]),
      '13004',
      'orderList[sequence=5].assets[0].products[0]: crmProductId or productUri is required to find the product',
    );
  });
});

describe('order op 5: cloud license types', () => {
  it('issue fresh numbers on purchase and need srcLicenseOrderId to revoke', async () => {
    const [bought] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          licenseType: 'cloud_account',
          assets: [{ products: [product()] }, { assetNos: [], products: [product()] }],
        }),
      ]),
    );
    const nums = (
      await h.database.db
        .selectFrom('assets')
        .select('asset_num')
        .where('customer_id', '=', bought?.customerId as string)
        .orderBy('asset_num')
        .execute()
    ).map((a) => a.asset_num);
    expect(nums).toHaveLength(2);
    for (const n of nums) expect(n).toMatch(/^8[0-9]{9}$/);

    const cloudRevoke = (extra: Record<string, unknown>) =>
      postBatch(
        h,
        tenant,
        batch(tenant, [
          {
            sequence: 1,
            customerId: bought?.customerId,
            licenseType: 'cloud_account',
            orderType: 'delete_asset',
            assets: [{ assetNos: [nums[0]] }],
            ...extra,
          },
        ]),
      );
    expectFailure(
      await cloudRevoke({}),
      '13004',
      'orderList[sequence=1].srcLicenseOrderId: is required to revoke a cloud_account',
    );
    const done = await cloudRevoke({ srcLicenseOrderId: bought?.licenseOrderId });
    expect(done.statusCode, done.body).toBe(200);
    expect((await assetRow(h, nums[0] as string))?.revoked).toBe(true);
    expect((await assetRow(h, nums[1] as string))?.revoked).toBe(false);
  });
});

describe('order op 5: one batch, several orders', () => {
  it('applies orders in list order, so a later one sees an earlier one', async () => {
    const num = assetNum();
    const channelCustomerId = uniqueCode('cc');
    const result = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          sequence: 1,
          channelCustomerId,
          assets: [
            { assetNos: [num], products: [product({ crmProductId: 'X' }), product({ crmProductId: 'Y' })] },
          ],
        }),
        {
          sequence: 2,
          channelCustomerId,
          licenseType: 'normal_recover_usbkey',
          orderType: 'delete_product',
          assets: [{ assetNos: [num], products: [{ crmProductId: 'X' }] }],
        },
      ]),
    );
    expect(result[0]?.customerId).toBe(result[1]?.customerId);
    expect((await live(num)).map((p) => p.crm_product_id)).toEqual(['Y']);
  });
});
