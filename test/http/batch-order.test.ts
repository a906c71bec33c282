import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LICENSE_TYPES } from '../../src/domain/orders/order-model.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { createTestApp } from '../support/fixtures.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { nonce, startHarness, uniqueCode, type Harness } from '../support/harness.js';
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
  visibleEnterprise,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

const customerOf = (customerId: string) =>
  h.database.db.selectFrom('customers').selectAll().where('id', '=', customerId).executeTakeFirst();

describe('order op 5: new_buy', () => {
  it('creates the customer, the asset with its extensions and flags, and the products', async () => {
    const num = assetNum();
    const channelCustomerId = uniqueCode('cc');
    const body = batch(tenant, [
      newBuy({
        sequence: '7',
        channelCustomerId,
        crmCustomerId: uniqueCode('crm'),
        customerName: 'Acme Ltd',
        address: '1 Main St',
        branchCode: 'B01',
        branchName: 'North',
        passwordMobile: '13800000000',
        adminName: 'ignored',
        assets: [
          {
            assetNos: [num],
            assetExtendList: [
              { extendCode: 'region', extendValue: 'east' },
              { extendCode: 'seats', extendValue: '10' },
            ],
            limitStartDate: 1_700_000_000_000,
            limitEndDate: 4_000_000_000_000,
            borrowedUsbKey: true,
            transferedAssetNum: false,
            products: [
              product({
                crmProductId: 'P-1',
                parentCrmProductId: 'A-1',
                productUri: 'gms-42',
                gmsPid: 'gms-42',
                appKey: 'web-42',
                productName: 'Modeler',
                productType: 'tool',
                limitStartDate: '1700000000000',
                limitEndDate: 1_731_536_000_000,
                limitConcurrent: '3',
                limitTimeDuration: 3600,
                limitAmount: '250',
                trial: 1,
                trialEndDate: 1_700_100_000_000,
                passwords: ['pw-1', 'pw-2'],
                timeUnit: 'year',
                timeUnitQuantity: 1,
                srcLicenseOrderId: 'transfer-src',
                productFeatures: [
                  {
                    featureCode: 'F1',
                    featureName: 'Export',
                    featureValue: 'on',
                    featureValueType: 'bool',
                    trial: 1,
                    trialEndDate: '2024-01-02T03:04:05Z',
                  },
                  { featureCode: 'F2', trialEndDate: 1_704_164_645_000 },
                ],
              }),
            ],
          },
        ],
      }),
    ]);
    const [result] = await submit(h, tenant, body);
    expect(result).toMatchObject({ sequence: 7 });
    expect(result?.licenseOrderId).toEqual(expect.any(String));

    const customer = await customerOf(result?.customerId as string);
    expect(customer).toMatchObject({
      channel_code: tenant.channel,
      channel_customer_id: channelCustomerId,
      name: 'Acme Ltd',
      address: '1 Main St',
      branch_code: 'B01',
      branch_name: 'North',
      security_mobile: '13800000000',
      customer_type: 'company',
      enterprise_id: null,
      is_default: false,
    });

    const asset = await assetRow(h, num);
    expect(asset).toMatchObject({
      license_type: 'normal_recover_usbkey',
      customer_id: result?.customerId,
      limit_start_time: 1_700_000_000_000,
      limit_end_time: 4_000_000_000_000,
      borrowed_usb_key: true,
      transfered_asset_num: false,
      locked: false,
      revoked: false,
    });
    const extendsRows = await h.database.db
      .selectFrom('asset_extends')
      .select(['extend_code', 'extend_value'])
      .where('asset_id', '=', asset?.id as string)
      .orderBy('extend_code')
      .execute();
    expect(extendsRows).toEqual([
      { extend_code: 'region', extend_value: 'east' },
      { extend_code: 'seats', extend_value: '10' },
    ]);

    const [p] = await productsOn(h, num);
    expect(p).toMatchObject({
      merchandise_ins_id: null,
      license_order_id: result?.licenseOrderId,
      channel_code: tenant.channel,
      channel_order_id: body.channelOrderId,
      customer_id: result?.customerId,
      license_type: 'normal_recover_usbkey',
      crm_product_id: 'P-1',
      parent_crm_product_id: 'A-1',
      product_uri: 'gms-42',
      gms_pid: 'gms-42',
      app_key: 'web-42',
      product_name: 'Modeler',
      product_type: 'tool',
      limit_start_time: 1_700_000_000_000,
      limit_end_time: 1_731_536_000_000,
      limit_concurrent: 3,
      limit_time_duration: 3600,
      limit_amount: 250,
      trial: 1,
      trial_end_date: 1_700_100_000_000,
      time_unit: 'year',
      time_unit_quantity: 1,
      src_license_order_id: 'transfer-src',
      passwords: ['pw-1', 'pw-2'],
      revoked: false,
    });
    expect(p?.features).toEqual([
      {
        featureCode: 'F1',
        featureName: 'Export',
        featureValue: 'on',
        featureValueType: 'bool',
        trial: 1,
        trialEndDate: 1_704_164_645_000,
      },
      {
        featureCode: 'F2',
        featureName: null,
        featureValue: null,
        featureValueType: null,
        trial: 0,
        trialEndDate: 1_704_164_645_000,
      },
    ]);
    const order = await h.database.db
      .selectFrom('license_orders')
      .selectAll()
      .where('id', '=', result?.licenseOrderId as string)
      .executeTakeFirst();
    expect(order).toMatchObject({ status: 'completed', sequence: 7, order_type: 'new_buy', reason: null });
  });

  it('accepts all fourteen license types, giving cloud types without numbers fresh ones', async () => {
    const orders = LICENSE_TYPES.map((licenseType, i) => {
      const cloud = licenseType.startsWith('cloud_');
      return newBuy({
        sequence: i,
        licenseType,
        assets: [{ assetNos: cloud ? [] : [assetNum()], products: [product()] }],
      });
    });
    const result = await submit(h, tenant, batch(tenant, orders));
    expect(result.map((r) => r.sequence)).toEqual(LICENSE_TYPES.map((_, i) => i));
    const assets = await h.database.db
      .selectFrom('assets')
      .select(['asset_num', 'license_type'])
      .where(
        'customer_id',
        'in',
        result.map((r) => r.customerId),
      )
      .execute();
    expect(assets.map((a) => a.license_type).sort()).toEqual([...LICENSE_TYPES].sort());
    const cloud = assets.filter((a) => a.license_type.startsWith('cloud_'));
    for (const a of cloud) expect(a.asset_num).toMatch(/^8[0-9]{9}$/);
    const issued = await h.database.db
      .selectFrom('issued_asset_number_runs')
      .select(sql<string>`unnest(asset_nums)`.as('asset_num'))
      .execute();
    const issuedNums = new Set(issued.map((r) => r.asset_num));
    expect(cloud.filter((a) => issuedNums.has(a.asset_num))).toHaveLength(3);
  });

  it('puts products on every number of an asset and merchandise trees of any depth under them', async () => {
    const nums = [assetNum(), assetNum()];
    const leaf = (depth: number): Record<string, unknown> => ({
      crmProductId: `M${depth}`,
      merchandiseNum: `PKG-${depth}`,
      merchandiseName: `Package ${depth}`,
      parentMerchandiseNum: depth === 0 ? null : `PKG-${depth - 1}`,
      timeDurationExpression: '1-0-0',
      children: depth === 4 ? null : [leaf(depth + 1)],
      licenseOrderProductList: [product({ crmProductId: `MP${depth}`, productUri: `uri-${depth}` })],
    });
    const [result] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          assets: [
            {
              assetNos: nums,
              products: [],
              merchandises: [leaf(0), { merchandiseNum: 'SOLO', licenseOrderProductList: [product()] }],
            },
          ],
        }),
      ]),
    );
    for (const num of nums) {
      const asset = await assetRow(h, num);
      const nodes = await h.database.db
        .selectFrom('merchandise_instances')
        .selectAll()
        .where('asset_id', '=', asset?.id as string)
        .execute();
      expect(nodes).toHaveLength(6);
      const byNum = new Map(nodes.map((n) => [n.merchandise_num, n]));
      expect(byNum.get('PKG-0')?.parent_id).toBeNull();
      expect(byNum.get('SOLO')?.parent_id).toBeNull();
      for (let depth = 1; depth <= 4; depth++) {
        expect(byNum.get(`PKG-${depth}`)?.parent_id).toBe(byNum.get(`PKG-${depth - 1}`)?.id);
      }
      expect(byNum.get('PKG-2')).toMatchObject({
        license_order_id: result?.licenseOrderId,
        customer_id: result?.customerId,
        license_type: 'normal_recover_usbkey',
        crm_product_id: 'M2',
        merchandise_name: 'Package 2',
        parent_merchandise_num: 'PKG-1',
        time_duration_expression: '1-0-0',
        channel_code: tenant.channel,
      });
      const products = await productsOn(h, num);
      expect(products).toHaveLength(6);
      const deep = products.find((p) => p.crm_product_id === 'MP4');
      expect(deep?.merchandise_ins_id).toBe(byNum.get('PKG-4')?.id);
    }
  });

  it('computes a missing end from timeDurationExpression by calendar (UTC)', async () => {
    const num = assetNum();
    const jan31 = Date.UTC(2024, 0, 31, 8, 30);
    const before = Date.now();
    await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          assets: [
            {
              assetNos: [num],
              products: [
                product({
                  crmProductId: 'year',
                  limitStartDate: jan31,
                  limitEndDate: null,
                  timeDurationExpression: '1-0-0',
                }),
                product({
                  crmProductId: 'month',
                  limitStartDate: jan31,
                  limitEndDate: null,
                  timeDurationExpression: '0-1-0',
                }),
                product({
                  crmProductId: 'mixed',
                  limitStartDate: jan31,
                  limitEndDate: null,
                  timeDurationExpression: '1-1-1',
                }),
                product({
                  crmProductId: 'given',
                  limitStartDate: jan31,
                  limitEndDate: jan31 + 5,
                  timeDurationExpression: '9-0-0',
                }),
                product({
                  crmProductId: 'nostart',
                  limitStartDate: null,
                  limitEndDate: null,
                  timeDurationExpression: '0-0-10',
                }),
                product({ crmProductId: 'none', limitStartDate: null, limitEndDate: null }),
              ],
              merchandises: [
                {
                  merchandiseNum: 'PKG',
                  timeDurationExpression: '2-0-0',
                  licenseOrderProductList: [
                    product({ crmProductId: 'inherits', limitStartDate: jan31, limitEndDate: null }),
                  ],
                },
              ],
            },
          ],
        }),
      ]),
    );
    const products = new Map((await productsOn(h, num)).map((p) => [p.crm_product_id, p]));
    expect(products.get('year')?.limit_end_time).toBe(Date.UTC(2025, 0, 31, 8, 30));
    expect(products.get('month')?.limit_end_time).toBe(Date.UTC(2024, 1, 29, 8, 30));
    expect(products.get('mixed')?.limit_end_time).toBe(Date.UTC(2025, 1, 29, 8, 30));
    expect(products.get('given')?.limit_end_time).toBe(jan31 + 5);
    expect(products.get('inherits')?.limit_end_time).toBe(Date.UTC(2026, 0, 31, 8, 30));
    expect(products.get('inherits')?.time_duration_expression).toBeNull();
    const nostart = products.get('nostart');
    expect(nostart?.limit_start_time).toBeGreaterThanOrEqual(before - 60_000);
    expect(nostart?.limit_end_time).toBe((nostart?.limit_start_time as number) + 10 * 86_400_000);
    expect(products.get('none')).toMatchObject({ limit_start_time: null, limit_end_time: null });
  });

  it('finds the customer by customerId, by channel customer id, then by CRM id', async () => {
    const channelCustomerId = uniqueCode('cc');
    const crmCustomerId = uniqueCode('crm');
    const [first] = await submit(h, tenant, batch(tenant, [newBuy({ channelCustomerId, crmCustomerId })]));
    const again = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({ sequence: 1, channelCustomerId: null, customerId: first?.customerId }),
        newBuy({ sequence: 2, channelCustomerId }),
        newBuy({ sequence: 3, channelCustomerId: null, crmCustomerId }),
        newBuy({ sequence: 4, channelCustomerId: uniqueCode('unknown'), crmCustomerId }),
      ]),
    );
    for (const r of again) expect(r.customerId).toBe(first?.customerId);
  });

  it('takes blank and null strings as not given, and trims names', async () => {
    const channelCustomerId = uniqueCode('cc');
    const num = assetNum();
    const [first] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          customerId: '',
          channelCustomerId: ` ${channelCustomerId} `,
          crmCustomerId: '  ',
          customerName: '  Trimmed Co  ',
          enterpriseGlobalId: '',
          srcLicenseOrderId: null,
          assets: [
            {
              assetNos: [num],
              products: [product({ crmProductId: '', productUri: 'uri-blank', timeDurationExpression: '' })],
            },
          ],
        }),
      ]),
    );
    expect(await customerOf(first?.customerId as string)).toMatchObject({
      channel_customer_id: channelCustomerId,
      crm_customer_id: null,
      name: 'Trimmed Co',
    });
    const [p] = await productsOn(h, num);
    expect(p).toMatchObject({
      crm_product_id: null,
      product_uri: 'uri-blank',
      time_duration_expression: null,
    });
    const revoked = await postBatch(
      h,
      tenant,
      batch(tenant, [
        {
          sequence: 2,
          channelCustomerId,
          srcLicenseOrderId: '',
          licenseType: 'normal_recover_usbkey',
          orderType: 'delete_product',
          assets: [{ assetNos: [num], products: [{ crmProductId: '', productUri: 'uri-blank' }] }],
        },
      ]),
    );
    expect(revoked.statusCode, revoked.body).toBe(200);
  });

  it('binds a new customer to the enterpriseGlobalId given', async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const [result] = await submit(
      h,
      tenant,
      batch(tenant, [newBuy({ enterpriseGlobalId: enterprise.globalId })]),
    );
    expect((await customerOf(result?.customerId as string))?.enterprise_id).toBe(enterprise.id);
  });

  it('adds to an asset the customer already holds and keeps what is not given', async () => {
    const num = assetNum();
    const channelCustomerId = uniqueCode('cc');
    await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          channelCustomerId,
          assets: [
            { assetNos: [num], borrowedUsbKey: true, limitEndDate: 4_000_000_000_000, products: [product()] },
          ],
        }),
      ]),
    );
    await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          channelCustomerId,
          assets: [
            {
              assetNos: [num],
              assetExtendList: [{ extendCode: 'k', extendValue: 'v' }],
              products: [product()],
            },
          ],
        }),
      ]),
    );
    expect(await assetRow(h, num)).toMatchObject({
      borrowed_usb_key: true,
      limit_end_time: 4_000_000_000_000,
    });
    expect(await productsOn(h, num)).toHaveLength(2);
  });

  it("refuses a number of another customer or of another license type, naming the order's field", async () => {
    const num = assetNum();
    await submit(
      h,
      tenant,
      batch(tenant, [newBuy({ assets: [{ assetNos: [num], products: [product()] }] })]),
    );
    const mine = uniqueCode('cc');
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [
          newBuy({
            sequence: 3,
            channelCustomerId: mine,
            assets: [{ assetNos: [assetNum(), num], products: [product()] }],
          }),
        ]),
      ),
      '13004',
      'orderList[sequence=3].assets[0].assetNos[1]: belongs to another customer',
    );
    const other = assetNum();
    await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({ channelCustomerId: mine, assets: [{ assetNos: [other], products: [product()] }] }),
      ]),
    );
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [
          newBuy({
            channelCustomerId: mine,
            licenseType: 'softkey',
            assets: [{ assetNos: [other], products: [product()] }],
          }),
        ]),
      ),
      '13004',
      'orderList[sequence=1].assets[0].assetNos[0]: is a normal_recover_usbkey asset, not softkey',
    );
  });

  it('applies a batch with a bad order not at all', async () => {
    const taken = assetNum();
    await submit(
      h,
      tenant,
      batch(tenant, [newBuy({ assets: [{ assetNos: [taken], products: [product()] }] })]),
    );
    const goodNum = assetNum();
    const channelCustomerId = uniqueCode('cc');
    const body = batch(tenant, [
      newBuy({ sequence: 1, channelCustomerId, assets: [{ assetNos: [goodNum], products: [product()] }] }),
      newBuy({ sequence: 2, assets: [{ assetNos: [assetNum()], products: [product()] }] }),
      newBuy({ sequence: 3, assets: [{ assetNos: [taken], products: [product()] }] }),
    ]);
    expectFailure(
      await postBatch(h, tenant, body),
      '13004',
      /^orderList\[sequence=3\]\.assets\[0\]\.assetNos\[0\]: /,
    );
    expect(await assetRow(h, goodNum)).toBeUndefined();
    const customers = await h.database.db
      .selectFrom('customers')
      .select('id')
      .where('channel_customer_id', '=', channelCustomerId)
      .execute();
    expect(customers).toEqual([]);
    const batches = await h.database.db
      .selectFrom('order_batches')
      .select('id')
      .where('channel_order_id', '=', body.channelOrderId as string)
      .execute();
    expect(batches).toEqual([]);
  });

  it('refuses an unknown customerId and an enterprise the app cannot see', async () => {
    expectFailure(
      await postBatch(h, tenant, batch(tenant, [newBuy({ customerId: 'no-such-customer' })])),
      '13004',
      'orderList[sequence=1].customerId: no such customer',
    );
    const other = await orderTenant(h);
    const hidden = await visibleEnterprise(h, other);
    expectFailure(
      await postBatch(h, tenant, batch(tenant, [newBuy({ enterpriseGlobalId: hidden.globalId })])),
      '13004',
      'orderList[sequence=1].enterpriseGlobalId: no such enterprise',
    );
  });
});

describe('order op 5: validation', () => {
  const noProducts = { assets: [{ assetNos: [assetNum()], products: [] }] };
  it.each<[string, Record<string, unknown>, string | RegExp]>([
    [
      'an unknown licenseType',
      newBuy({ licenseType: 'dongle' }),
      /^orderList\[0\]\.licenseType: must be one of /,
    ],
    [
      'an unknown orderType',
      newBuy({ orderType: 'refund' }),
      /^orderList\[0\]\.orderType: must be one of new_buy, /,
    ],
    [
      'an unknown customerType',
      newBuy({ customerType: 'alien' }),
      /^orderList\[0\]\.customerType: must be one of /,
    ],
    ['a sequence that is not an integer', newBuy({ sequence: 'one' }), /^orderList\[0\]\.sequence: /],
    [
      'a new_buy without products',
      newBuy(noProducts),
      'orderList[sequence=1].assets[0].products: must not be empty unless orderType is delete_asset',
    ],
    [
      'a delete_product without products',
      newBuy({ orderType: 'delete_product', ...noProducts }),
      'orderList[sequence=1].assets[0].products: must not be empty unless orderType is delete_asset',
    ],
    [
      'a revocation of a cloud type without srcLicenseOrderId',
      newBuy({ licenseType: 'cloud_customer', orderType: 'delete_asset' }),
      'orderList[sequence=1].srcLicenseOrderId: is required to revoke a cloud_customer',
    ],
    [
      'a lock bought without numbers',
      newBuy({ assets: [{ assetNos: [], products: [product()] }] }),
      'orderList[sequence=1].assets[0].assetNos: must not be empty unless a cloud license type is bought',
    ],
    [
      'a number listed twice in one order',
      newBuy({
        assets: [
          { assetNos: ['K1', 'K2'], products: [product()] },
          { assetNos: ['K2'], products: [product()] },
        ],
      }),
      'orderList[sequence=1].assets[1].assetNos[0]: is listed twice in this order (orderList[sequence=1].assets[0].assetNos[1])',
    ],
    [
      'a malformed timeDurationExpression',
      newBuy({ assets: [{ assetNos: [assetNum()], products: [product({ timeDurationExpression: '1y' })] }] }),
      'orderList[sequence=1].assets[0].products[0].timeDurationExpression: must be y-m-d, e.g. 1-0-0',
    ],
    [
      'an end before the start',
      newBuy({
        assets: [{ assetNos: [assetNum()], products: [product({ limitStartDate: 10, limitEndDate: 5 })] }],
      }),
      'orderList[sequence=1].assets[0].products[0].limitEndDate: must not be before limitStartDate',
    ],
    [
      'an order without any customer key',
      newBuy({ channelCustomerId: null }),
      'orderList[sequence=1].customerId: one of customerId, channelCustomerId or crmCustomerId is required',
    ],
    [
      'a malformed purchaser mobile',
      newBuy({ passwordMobile: '12345' }),
      'orderList[sequence=1].passwordMobile: must be a mainland mobile number (1[3-9] and 9 digits) or E.164 (+country number)',
    ],
    [
      'a customer name over 100 characters',
      newBuy({ customerName: 'n'.repeat(101) }),
      /^orderList\[0\]\.customerName: /,
    ],
    [
      'a product without an identifier',
      newBuy({ assets: [{ assetNos: [assetNum()], products: [{ productName: 'x' }] }] }),
      'orderList[sequence=1].assets[0].products[0].productUri: is required (or gmsPid or appKey)',
    ],
    [
      'a malformed feature trialEndDate',
      newBuy({
        assets: [
          {
            assetNos: [assetNum()],
            products: [product({ productFeatures: [{ featureCode: 'F', trialEndDate: 'soon' }] })],
          },
        ],
      }),
      'orderList[sequence=1].assets[0].products[0].productFeatures[0].trialEndDate: must be ISO 8601 or epoch milliseconds',
    ],
    [
      'a malformed asset number',
      newBuy({ assets: [{ assetNos: ['has space'], products: [product()] }] }),
      /^orderList\[0\]\.assets\[0\]\.assetNos\[0\]: /,
    ],
    [
      'a bad value deep in a merchandise tree',
      newBuy({
        assets: [
          {
            assetNos: [assetNum()],
            merchandises: [
              { children: [{ children: [{ licenseOrderProductList: [product({ limitConcurrent: -1 })] }] }] },
            ],
          },
        ],
      }),
      'orderList[0].assets[0].merchandises[0].children[0].children[0].licenseOrderProductList[0].limitConcurrent: must be >= 0',
    ],
    ...(
      [
        ['a negative limitAmount', -1, 'must be >= 0'],
        ['a limitAmount that is no number', 'lots', 'must be integer'],
        ['a limitAmount beyond 32 bits', 2_147_483_648, 'must be <= 2147483647'],
        ['a fractional limitAmount', 1.5, 'must be integer'],
      ] as const
    ).map(([name, limitAmount, problem]): [string, Record<string, unknown>, string] => [
      name,
      newBuy({ assets: [{ assetNos: [assetNum()], products: [product({ limitAmount })] }] }),
      `orderList[0].assets[0].products[0].limitAmount: ${problem}`,
    ]),
  ])('refuses %s with 13004 naming the field', async (_name, order, message) => {
    expectFailure(await postBatch(h, tenant, batch(tenant, [order])), '13004', message);
  });

  it('refuses a sequence used twice', async () => {
    expectFailure(
      await postBatch(h, tenant, batch(tenant, [newBuy({ sequence: 4 }), newBuy({ sequence: '4' })])),
      '13004',
      'orderList[1].sequence: 4 is used by another order',
    );
  });

  it.each<[string, Record<string, unknown>, string | RegExp]>([
    ['an unknown syncMode', { syncMode: 'later' }, 'syncMode: must be one of sync, async'],
    ['an empty orderList', { orderList: [] }, /^orderList: /],
    ['a missing channelOrderId', { channelOrderId: undefined }, 'channelOrderId: is required'],
  ])('refuses %s', async (_name, overrides, message) => {
    expectFailure(await postBatch(h, tenant, batch(tenant, [newBuy()], overrides)), '13004', message);
  });

  it('refuses malformed JSON with 13004', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/licenseOrder/batchOrder?appKey=${tenant.app.appKey}&g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      payload: '{"orderList": [',
    });
    expectFailure(response, '13004', 'body: is not valid JSON');
  });

  it('states the limits: 200 orders, 1,000 array elements, 10 MiB', async () => {
    const orders = Array.from({ length: 201 }, (_, i) => newBuy({ sequence: i }));
    expectFailure(
      await postBatch(h, tenant, batch(tenant, orders)),
      '13004',
      'orderList: must NOT have more than 200 items',
    );
    const nums = Array.from({ length: 1001 }, () => assetNum());
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [newBuy({ assets: [{ assetNos: nums, products: [product()] }] })]),
      ),
      '13004',
      'orderList[0].assets[0].assetNos: must NOT have more than 1000 items',
    );
    const huge = batch(tenant, [newBuy({ customerName: 'x'.repeat(10 * 1024 * 1024) })]);
    expectFailure(await postBatch(h, tenant, huge), '13004', 'body: larger than the limit of 10485760 bytes');
  });
});

describe('order op 5: who may call', () => {
  it('refuses an appKey that is not the token’s, or none, with 60000', async () => {
    const other = await createTestApp(h, { scopes: ['auth_order'] });
    expectFailure(await postBatch(h, tenant, batch(tenant, [newBuy()]), { appKey: other.appKey }), '60000');
    expectFailure(await postBatch(h, tenant, batch(tenant, [newBuy()]), { appKey: null }), '60000');
  });

  it('refuses a channel the app does not hold with 60000, before validating the body', async () => {
    const other = await createTestApp(h, { scopes: ['auth_order'] });
    const body = batch(tenant, [newBuy({ licenseType: 'dongle' })], { channelCode: other.channels[0] });
    expectFailure(await postBatch(h, tenant, body), '60000');
  });

  it('never finds a customer of another channel: it creates its own', async () => {
    const other = await orderTenant(h);
    const crmCustomerId = uniqueCode('crm');
    await submit(h, other, batch(other, [newBuy({ crmCustomerId, channelCustomerId: null })]));
    expectFailure(
      await postBatch(h, tenant, batch(tenant, [newBuy({ crmCustomerId, channelCustomerId: null })])),
      '13004',
      'orderList[sequence=1].crmCustomerId: is not available to this application',
    );
    const theirs = await submit(h, other, batch(other, [newBuy({ crmCustomerId, channelCustomerId: null })]));
    expectFailure(
      await postBatch(
        h,
        tenant,
        batch(tenant, [newBuy({ customerId: theirs[0]?.customerId, channelCustomerId: null })]),
      ),
      '13004',
      'orderList[sequence=1].customerId: no such customer',
    );
  });
});

orderGuardSuite(() => h, {
  method: 'POST',
  path: () => `${ORDER_PREFIX}/licenseOrder/batchOrder`,
  payload: ({ app }) => ({
    channelCode: app.channels[0],
    channelOrderId: uniqueCode('CO'),
    syncMode: 'sync',
    orderList: [newBuy()],
  }),
});
