import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type OrderTenant,
} from './order-helpers.js';

// A batch's new_buy orders that share no asset number are written together, a few statements for
// the whole run; orders that do share one are applied after one another. Either way the outcome
// is that of applying the orders in sequence.

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

const merchandiseOn = (num: string) =>
  h.database.db
    .selectFrom('merchandise_instances as m')
    .innerJoin('assets as a', 'a.id', 'm.asset_id')
    .selectAll('m')
    .where('a.asset_num', '=', num)
    .orderBy('m.id')
    .execute();

describe('order op 5: several new_buy orders in one batch', () => {
  it("writes each order's assets, merchandise and products under its own order, customer and type", async () => {
    const [lock, cert] = [assetNum(), assetNum()];
    const results = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({ sequence: 1, assets: [{ assetNos: [lock], products: [product(), product()] }] }),
        newBuy({
          sequence: 2,
          licenseType: 'softkey',
          assets: [
            {
              assetNos: [cert],
              products: [],
              merchandises: [
                {
                  merchandiseNum: 'M-1',
                  merchandiseName: 'Suite',
                  licenseOrderProductList: [product({ productName: 'Inside' })],
                  children: [{ merchandiseNum: 'M-2', licenseOrderProductList: [product()] }],
                },
              ],
            },
          ],
        }),
        newBuy({
          sequence: 3,
          licenseType: 'cloud_account',
          assets: [{ assetNos: [], products: [product()] }],
        }),
      ]),
    );
    expect(results.map((r) => r.sequence)).toEqual([1, 2, 3]);
    const [first, second, third] = results as [(typeof results)[0], (typeof results)[0], (typeof results)[0]];

    expect(await assetRow(h, lock)).toMatchObject({
      customer_id: first.customerId,
      license_type: 'normal_recover_usbkey',
    });
    expect(
      (await productsOn(h, lock)).map((p) => [p.license_order_id, p.customer_id, p.license_type]),
    ).toEqual([
      [first.licenseOrderId, first.customerId, 'normal_recover_usbkey'],
      [first.licenseOrderId, first.customerId, 'normal_recover_usbkey'],
    ]);

    const merchandise = await merchandiseOn(cert);
    expect(merchandise.map((m) => [m.merchandise_num, m.license_order_id, m.customer_id])).toEqual([
      ['M-1', second.licenseOrderId, second.customerId],
      ['M-2', second.licenseOrderId, second.customerId],
    ]);
    expect(merchandise[1]?.parent_id).toBe(merchandise[0]?.id);
    const inside = await productsOn(h, cert);
    expect(inside.map((p) => [p.merchandise_ins_id, p.license_order_id, p.license_type])).toEqual([
      [merchandise[0]?.id, second.licenseOrderId, 'softkey'],
      [merchandise[1]?.id, second.licenseOrderId, 'softkey'],
    ]);

    const cloud = await h.database.db
      .selectFrom('assets')
      .select(['asset_num', 'license_type'])
      .where('customer_id', '=', third.customerId)
      .execute();
    expect(cloud).toEqual([
      { asset_num: expect.stringMatching(/^8[0-9]{9}$/), license_type: 'cloud_account' },
    ]);
  });

  it('lets a later order buy again on a number an earlier order of the batch created', async () => {
    const num = assetNum();
    const channelCustomerId = uniqueCode('cc');
    const [first, second] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({ sequence: 1, channelCustomerId, assets: [{ assetNos: [num], products: [product()] }] }),
        newBuy({
          sequence: 2,
          channelCustomerId,
          assets: [{ assetNos: [num], limitEndDate: 1_900_000_000_000, products: [product()] }],
        }),
      ]),
    );
    expect(second?.customerId).toBe(first?.customerId);
    expect(await assetRow(h, num)).toMatchObject({ limit_end_time: 1_900_000_000_000 });
    expect((await productsOn(h, num)).map((p) => p.license_order_id)).toEqual([
      first?.licenseOrderId,
      second?.licenseOrderId,
    ]);
  });

  it('refuses a later order that buys an earlier order’s new number as another license type', async () => {
    const num = assetNum();
    const channelCustomerId = uniqueCode('cc');
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [
          newBuy({ sequence: 1, channelCustomerId, assets: [{ assetNos: [num], products: [product()] }] }),
          newBuy({
            sequence: 2,
            channelCustomerId,
            licenseType: 'softkey',
            assets: [{ assetNos: [num], products: [product()] }],
          }),
        ]),
      ),
      '13004',
      'orderList[sequence=2].assets[0].assetNos[0]: is a normal_recover_usbkey asset, not softkey',
    );
    expect(await assetRow(h, num)).toBeUndefined();
  });

  it('names the first order of the list that fails when several would, and writes none of them', async () => {
    const [taken, alsoTaken] = [assetNum(), assetNum()];
    await submit(
      h,
      tenant,
      batch(tenant, [newBuy({ assets: [{ assetNos: [taken, alsoTaken], products: [product()] }] })]),
    );
    const fresh = assetNum();
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [
          newBuy({ sequence: 5, assets: [{ assetNos: [fresh], products: [product()] }] }),
          newBuy({ sequence: 7, assets: [{ assetNos: [assetNum(), taken], products: [product()] }] }),
          newBuy({ sequence: 6, assets: [{ assetNos: [alsoTaken], products: [product()] }] }),
        ]),
      ),
      '13004',
      'orderList[sequence=7].assets[0].assetNos[1]: belongs to another customer',
    );
    expect(await assetRow(h, fresh)).toBeUndefined();
  });
});
