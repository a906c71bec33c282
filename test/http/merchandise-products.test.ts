import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetNo,
  assetWorld,
  assign,
  borrow,
  buy,
  buyAsset,
  buyLentLock,
  okData,
  productNames,
  productSpec,
  productsUnder,
  revoke,
  type AssetWorld,
  type MerchandiseItem,
} from '../support/order-fixtures.js';
import { adminSession, expectFailure } from './member-helpers.js';

let h: Harness;
let world: AssetWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

const PRODUCT_FIELDS = [
  'id',
  'licenseType',
  'customerId',
  'assetId',
  'assetInsId',
  'merchandiseInsId',
  'assetNum',
  'productUri',
  'gmsPid',
  'appKey',
  'productName',
  'channelCode',
  'licenseOrderId',
  'channelOrderId',
  'limitStartTime',
  'limitEndTime',
  'limitAmount',
  'limitConcurrent',
  'limitTimeDuration',
  'trial',
  'trialEndDate',
  'limitType',
  'prodDefExtend',
  'timeDurationExpression',
  'srcLicenseOrderId',
  'createTime',
  'updateTime',
  'activateFlag',
  'crmProductId',
  'productExtendInstanceList',
].sort();

const NODE_FIELDS = [
  'id',
  'licenseType',
  'merchandiseNum',
  'merchandiseName',
  'parentId',
  'parentMerchandiseNum',
  'customerId',
  'licenseOrderId',
  'channelOrderId',
  'createTime',
  'updateTime',
  'channelCode',
  'timeDurationExpression',
  'srcLicenseOrderId',
  'children',
  'productInstanceList',
].sort();

/** An asset with a product of its own and a two-level suite, plus an empty package. */
async function buySuite(w: AssetWorld): Promise<{ num: string; licenseOrderId: string }> {
  const num = assetNo('M');
  const licenseOrderId = await buy(w, [
    {
      assetNos: [num],
      products: [productSpec({ productName: 'Top' })],
      merchandises: [
        {
          crmProductId: uniqueCode('PK'),
          merchandiseNum: 'SUITE',
          merchandiseName: 'Suite',
          timeDurationExpression: '1-0-0',
          licenseOrderProductList: [productSpec({ productName: 'InSuite' })],
          children: [
            {
              crmProductId: uniqueCode('PK'),
              merchandiseNum: 'SUB',
              merchandiseName: 'Sub suite',
              parentMerchandiseNum: 'SUITE',
              children: null,
              licenseOrderProductList: [productSpec({ productName: 'Deep' })],
            },
          ],
        },
        { crmProductId: uniqueCode('PK'), merchandiseNum: 'EMPTY', merchandiseName: 'Empty', children: [] },
      ],
    },
  ]);
  return { num, licenseOrderId };
}

describe('member op 7: list products under an asset', () => {
  it('answers products outside merchandise at the top and the merchandise forest below', async () => {
    const { num, licenseOrderId } = await buySuite(world);
    const assetId = await assetIdOf(world, num);
    const view = await productsUnder(world, assetId);

    expect(view.productInstanceList.map((p) => p.productName)).toEqual(['Top']);
    const top = view.productInstanceList[0] as unknown as Record<string, unknown>;
    expect(Object.keys(top).sort()).toEqual(PRODUCT_FIELDS);
    expect(top).toMatchObject({
      id: expect.stringMatching(/^[0-9]+$/),
      licenseType: 'normal_recover_usbkey',
      customerId: world.customerId,
      assetId,
      assetInsId: null,
      merchandiseInsId: null,
      assetNum: num,
      productUri: 'gms-2001',
      gmsPid: 'gms-2001',
      appKey: '',
      channelCode: world.channel,
      licenseOrderId,
      channelOrderId: expect.any(String),
      limitStartTime: 1_700_000_000_000,
      limitEndTime: 4_000_000_000_000,
      limitAmount: null,
      limitConcurrent: 3,
      limitTimeDuration: null,
      trial: 0,
      trialEndDate: null,
      limitType: 'basic',
      prodDefExtend: false,
      timeDurationExpression: null,
      srcLicenseOrderId: null,
      createTime: expect.any(Number),
      updateTime: expect.any(Number),
      activateFlag: false,
      crmProductId: expect.stringMatching(/^P/),
      productExtendInstanceList: [],
    });

    expect(view.children.map((m) => m.merchandiseNum)).toEqual(['SUITE', 'EMPTY']);
    const [suite, empty] = view.children as [MerchandiseItem, MerchandiseItem];
    expect(Object.keys(suite).sort()).toEqual(NODE_FIELDS);
    expect(suite).toMatchObject({
      id: expect.stringMatching(/^[0-9]+$/),
      licenseType: 'normal_recover_usbkey',
      merchandiseName: 'Suite',
      parentId: null,
      parentMerchandiseNum: null,
      customerId: world.customerId,
      licenseOrderId,
      channelCode: world.channel,
      timeDurationExpression: '1-0-0',
      srcLicenseOrderId: null,
      createTime: expect.any(Number),
      updateTime: expect.any(Number),
    });
    expect(suite.productInstanceList?.map((p) => [p.productName, p.merchandiseInsId])).toEqual([
      ['InSuite', suite.id],
    ]);
    const sub = suite.children?.[0] as MerchandiseItem;
    expect(suite.children).toHaveLength(1);
    expect(sub).toMatchObject({ merchandiseNum: 'SUB', parentId: suite.id, parentMerchandiseNum: 'SUITE' });
    expect(sub.children).toBeNull();
    expect(sub.productInstanceList?.map((p) => p.productName)).toEqual(['Deep']);
    expect(empty).toMatchObject({ children: null, productInstanceList: null });
  });

  it('applies the merchandise time expression to its products and shows features as extensions', async () => {
    const num = assetNo('F');
    await buy(world, [
      {
        assetNos: [num],
        products: [
          productSpec({
            productName: 'Featured',
            limitEndDate: null,
            timeDurationExpression: '0-6-0',
            trial: 1,
            trialEndDate: 1_710_000_000_000,
            productFeatures: [
              {
                featureCode: 'EXPORT',
                featureName: 'Export',
                featureValue: '10',
                featureValueType: 'int',
                trial: 1,
                trialEndDate: 1_720_000_000_000,
              },
            ],
          }),
        ],
      },
    ]);
    const view = await productsUnder(world, await assetIdOf(world, num));
    expect(view.productInstanceList[0]).toMatchObject({
      limitStartTime: 1_700_000_000_000,
      limitEndTime: Date.UTC(2024, 4, 14, 22, 13, 20),
      trial: 1,
      trialEndDate: 1_710_000_000_000,
      timeDurationExpression: '0-6-0',
      limitType: 'feature',
      prodDefExtend: true,
      productExtendInstanceList: [
        {
          featureCode: 'EXPORT',
          featureName: 'Export',
          featureValue: '10',
          featureValueType: 'int',
          trial: 1,
          trialEndDate: 1_720_000_000_000,
        },
      ],
    });
    expect(view.children).toEqual([]);
  });

  it('shows the limitAmount an order gave, in merchandise too, and null where it gave none', async () => {
    const num = assetNo('L');
    await buy(world, [
      {
        assetNos: [num],
        products: [
          productSpec({ productName: 'Metered', limitAmount: 500, limitTimeDuration: 7200 }),
          productSpec({ productName: 'Unmetered' }),
        ],
        merchandises: [
          {
            merchandiseNum: 'METER',
            merchandiseName: 'Metered package',
            licenseOrderProductList: [productSpec({ productName: 'Packed', limitAmount: '0' })],
          },
        ],
      },
    ]);
    const view = await productsUnder(world, await assetIdOf(world, num));
    expect(view.productInstanceList.map((p) => [p.productName, p.limitAmount])).toEqual([
      ['Metered', 500],
      ['Unmetered', null],
    ]);
    expect(view.productInstanceList[0]).toMatchObject({ limitTimeDuration: 7200, limitConcurrent: 3 });
    expect(view.children[0]?.productInstanceList?.map((p) => [p.productName, p.limitAmount])).toEqual([
      ['Packed', 0],
    ]);
  });

  it('leaves out revoked products and keeps the merchandise that held them', async () => {
    const num = assetNo('R');
    const gone = productSpec({ productName: 'Gone' });
    await buy(world, [
      {
        assetNos: [num],
        products: [productSpec({ productName: 'Stays' }), gone],
        merchandises: [
          {
            merchandiseNum: 'PKG',
            merchandiseName: 'Package',
            licenseOrderProductList: [productSpec({ productName: 'Packed' })],
          },
        ],
      },
    ]);
    const packed = (await productsUnder(world, await assetIdOf(world, num))).children[0]
      ?.productInstanceList?.[0];
    await revoke(world, 'delete_product', [
      { assetNos: [num], products: [{ crmProductId: gone.crmProductId, productUri: 'gms-2001' }] },
    ]);
    await revoke(world, 'delete_product', [
      { assetNos: [num], products: [{ crmProductId: packed?.crmProductId, productUri: 'gms-2001' }] },
    ]);
    const view = await productsUnder(world, await assetIdOf(world, num));
    expect(productNames(view)).toEqual(['Stays']);
    expect(view.children).toMatchObject([
      { merchandiseNum: 'PKG', productInstanceList: null, children: null },
    ]);
  });

  it('shows on a lent lock its own products and, with one node each, those lent to it', async () => {
    const w = await assetWorld(h);
    const lock = await buyLentLock(w);
    const { num } = await buySuite(w);
    const member = await addMember(w);
    await assign(w, member.globalId, [num]);
    const sourceId = await assetIdOf(w, num);
    const before = await productsUnder(w, sourceId);
    okData(await borrow(member, member.globalId, lock, [sourceId]));

    const view = await productsUnder(w, await assetIdOf(w, lock));
    expect(productNames(view)).toEqual(['Deep', 'InSuite', 'Own', 'Top']);
    const own = view.productInstanceList.find((p) => p.productName === 'Own');
    const lent = view.productInstanceList.find((p) => p.productName === 'Top');
    expect(own).toMatchObject({ assetNum: lock, limitConcurrent: 3 });
    expect(lent).toMatchObject({ assetId: sourceId, assetNum: num, limitConcurrent: 1 });
    // The suite comes along with what is lent in it; the empty package stays behind.
    expect(view.children.map((m) => m.merchandiseNum)).toEqual(['SUITE']);
    expect(view.children[0]?.children?.[0]?.productInstanceList?.[0]).toMatchObject({
      productName: 'Deep',
      limitConcurrent: 1,
    });
    // The lent asset itself still shows what it holds.
    expect(await productsUnder(w, sourceId)).toEqual(before);
  });

  it('refuses an unknown asset, another enterprise’s asset and a revoked asset with 60024', async () => {
    const other = await assetWorld(h);
    const foreign = await assetIdOf(other, await buyAsset(other));
    const revoked = await buyAsset(world);
    const revokedId = await assetIdOf(world, revoked);
    await revoke(world, 'delete_asset', [{ assetNos: [revoked] }]);
    for (const id of [randomUUID(), foreign, revokedId]) {
      expectFailure(
        await world.admin.call('GET', `/enterprise/asset/${id}/merchandiseProducts`),
        '60024',
        'asset number not found',
      );
    }
  });

  it('refuses an enterprise bound to no customer with 60017', async () => {
    const bare = await adminSession(h);
    expectFailure(await bare.call('GET', `/enterprise/asset/${randomUUID()}/merchandiseProducts`), '60017');
  });

  it('refuses a plain member with 33003, even for its own asset', async () => {
    const member = await addMember(world);
    const num = await buyAsset(world);
    await assign(world, member.globalId, [num]);
    const id = await assetIdOf(world, num);
    expectFailure(await member.call('GET', `/enterprise/asset/${id}/merchandiseProducts`), '33003');
  });
});

memberGuardSuite(() => h, {
  method: 'GET',
  path: () => `${ME_PREFIX}/enterprise/asset/${randomUUID()}/merchandiseProducts`,
});
