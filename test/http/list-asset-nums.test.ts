import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { nonce, startHarness, uniqueCode, type Harness } from '../support/harness.js';
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
  listAssetNums,
  okData,
  productSpec,
  revoke,
  type AssetWorld,
} from '../support/order-fixtures.js';
import { adminSession, expectFailure } from './member-helpers.js';

let h: Harness;
let world: AssetWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

const path = (w: AssetWorld) => `/enterprise/${w.enterpriseGlobalId}/asset/assetNums`;

describe('member op 6: list enterprise asset numbers', () => {
  it('lists every live asset with its holder, lending and online flag', async () => {
    const free = await buyAsset(world);
    const held = await buyAsset(world);
    const lent = await buyAsset(world);
    const lock = await buyLentLock(world);
    const member = await addMember(world);
    await assign(world, member.globalId, [held, lent]);
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(world, lent)]));

    const items = await listAssetNums(world);
    const byNum = new Map(items.map((i) => [i.assetNum, i]));
    expect(byNum.get(free)).toEqual({
      assetNum: free,
      assetId: expect.any(String),
      cloudAccountGlobalId: null,
      borrowedFlag: false,
      onlineFlag: false,
    });
    expect(byNum.get(held)).toMatchObject({ cloudAccountGlobalId: member.globalId, borrowedFlag: false });
    expect(byNum.get(lent)).toMatchObject({ cloudAccountGlobalId: member.globalId, borrowedFlag: true });
    // The lent lock is an asset of the enterprise too, lent as op 8 says (DOMAIN §8: both sides).
    expect(byNum.get(lock)).toMatchObject({ cloudAccountGlobalId: null, borrowedFlag: true });
    for (const item of items)
      expect(Object.keys(item).sort()).toEqual(Object.keys(byNum.get(free) ?? {}).sort());
  });

  it('lists assets of every customer of the enterprise, of every license type, in purchase order', async () => {
    const w = await assetWorld(h);
    const first = await buyAsset(w);
    await buy(w, [{ products: [productSpec()] }], 'cloud_account');
    // A second customer of the same enterprise, in the same channel.
    const second = assetNo('S');
    okData(
      await w.h.app.inject({
        method: 'POST',
        url: `${ORDER_PREFIX}/licenseOrder/batchOrder?appKey=${w.app.appKey}&g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${w.token}` },
        payload: {
          channelCode: w.channel,
          channelOrderId: uniqueCode('CO'),
          syncMode: 'sync',
          orderList: [
            {
              sequence: 1,
              channelCustomerId: uniqueCode('cc'),
              customerName: 'Branch office',
              enterpriseGlobalId: w.enterpriseGlobalId,
              licenseType: 'softkey',
              orderType: 'new_buy',
              assets: [{ assetNos: [second], products: [productSpec()] }],
            },
          ],
        },
      }),
    );
    const nums = (await listAssetNums(w)).map((i) => i.assetNum);
    expect(nums).toHaveLength(3);
    expect(nums[0]).toBe(first);
    expect(nums[1]).toMatch(/^8[0-9]{9}$/);
    expect(nums[2]).toBe(second);
  });

  it('leaves out revoked assets, other enterprises’ assets and customers bound to none', async () => {
    const w = await assetWorld(h);
    const kept = await buyAsset(w);
    const gone = await buyAsset(w);
    await revoke(w, 'delete_asset', [{ assetNos: [gone] }]);
    const other = await assetWorld(h);
    await buyAsset(other);
    const nums = (await listAssetNums(w)).map((i) => i.assetNum);
    expect(nums).toEqual([kept]);
  });

  it('answers an empty list for an enterprise whose customers hold nothing', async () => {
    const w = await assetWorld(h);
    expect(await listAssetNums(w)).toEqual([]);
  });

  it('refuses an enterprise bound to no customer with 60017', async () => {
    const bare = await adminSession(h);
    expectFailure(
      await bare.call('GET', `/enterprise/${bare.enterprise.globalId}/asset/assetNums`),
      '60017',
      'current account not bound to an authorization customer',
    );
  });

  it('refuses a plain member with 33003', async () => {
    const member = await addMember(world);
    expectFailure(await member.call('GET', path(world)), '33003');
  });

  it('refuses the path of another enterprise with 70001', async () => {
    const other = await assetWorld(h);
    expectFailure(await world.admin.call('GET', path(other)), '70001');
  });
});

memberGuardSuite(() => h, {
  method: 'GET',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/${enterprise.globalId}/asset/assetNums`,
});
