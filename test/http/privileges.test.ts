import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { appToken, createTestApp, userToken } from '../support/fixtures.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
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
  listLentLocks,
  memberCaller,
  okData,
  privileges,
  productsUnder,
  productSpec,
  revoke,
  type AssetWorld,
  type MemberSession,
} from '../support/order-fixtures.js';
import { expectFailure } from './member-helpers.js';

let h: Harness;
let world: AssetWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

/** Asset number → the global id of its holder, from member op 6. */
async function holders(w: AssetWorld): Promise<Map<string, string | null>> {
  return new Map((await listAssetNums(w)).map((i) => [i.assetNum, i.cloudAccountGlobalId]));
}

async function assetNumsOf(w: AssetWorld, member: MemberSession): Promise<string[]> {
  const page = okData<{ list: Array<{ globalId: string; assetNums: string[] }> }>(
    await w.admin.call('GET', `/enterprise/${w.enterpriseGlobalId}/members?pageSize=500`),
  );
  return page.list.find((m) => m.globalId === member.globalId)?.assetNums ?? [];
}

describe('member op 9: configure assets of an employee', () => {
  it('assigns, then revokes and assigns in one call', async () => {
    const [a, b, c] = [await buyAsset(world), await buyAsset(world), await buyAsset(world)];
    const member = await addMember(world);
    const response = await privileges(world, member.globalId, { addAssets: [a, b] });
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });
    expect(await assetNumsOf(world, member)).toEqual([a, b].sort());

    okData(await privileges(world, member.globalId, { deleteAssets: [a], addAssets: [c] }));
    expect(await assetNumsOf(world, member)).toEqual([b, c].sort());
    const held = await holders(world);
    expect([held.get(a), held.get(b), held.get(c)]).toEqual([null, member.globalId, member.globalId]);
  });

  it('keeps what the member already holds and ignores revoking what it does not hold', async () => {
    const [mine, theirs] = [await buyAsset(world), await buyAsset(world)];
    const member = await addMember(world);
    const other = await addMember(world);
    await assign(world, member.globalId, [mine]);
    await assign(world, other.globalId, [theirs]);
    okData(await privileges(world, member.globalId, { deleteAssets: [theirs], addAssets: [mine] }));
    const held = await holders(world);
    expect([held.get(mine), held.get(theirs)]).toEqual([member.globalId, other.globalId]);
    okData(await privileges(world, member.globalId, { deleteAssets: [], addAssets: [] }));
  });

  it('assigns to the administrator too, and assets of every license type', async () => {
    const cloud = assetNo('C');
    await buy(world, [{ assetNos: [cloud], products: [productSpec()] }], 'cloud_account');
    await assign(world, world.admin.globalId, [cloud]);
    expect((await holders(world)).get(cloud)).toBe(world.admin.globalId);
  });

  it('gives back a lent asset before revoking it, releasing the lock it leaves empty', async () => {
    const w = await assetWorld(h);
    const lock = await buyLentLock(w);
    const asset = await buyAsset(w);
    const member = await addMember(w);
    await assign(w, member.globalId, [asset]);
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(w, asset)]));

    okData(await privileges(w, member.globalId, { deleteAssets: [asset] }));
    expect((await listAssetNums(w)).find((i) => i.assetNum === asset)).toMatchObject({
      cloudAccountGlobalId: null,
      borrowedFlag: false,
    });
    expect((await listLentLocks(w))[0]).toMatchObject({ borrowedFlag: false, cloudAccountGlobalId: null });
    const onLock = await productsUnder(w, await assetIdOf(w, lock));
    expect(onLock.productInstanceList.map((p) => p.productName)).toEqual(['Own']);
  });

  it('refuses a body without either list with 40000, and a malformed one naming the field', async () => {
    const member = await addMember(world);
    expectFailure(await privileges(world, member.globalId, {}), '40000');
    const typed = expectFailure(await privileges(world, member.globalId, { addAssets: [7] }), '40000');
    expect(typed.message).toBe('addAssets[0]: must be string');
    expectFailure(await privileges(world, member.globalId, { deleteAssets: 'x' }), '40000');
  });

  it('refuses an unknown, deleted or foreign member with 60026', async () => {
    const asset = await buyAsset(world);
    const gone = await addMember(world);
    okData(
      await world.admin.call('DELETE', `/enterprise/${world.enterpriseGlobalId}/member/${gone.globalId}`),
    );
    const other = await assetWorld(h);
    for (const id of ['no-such-member', gone.globalId, other.admin.globalId]) {
      expectFailure(
        await privileges(world, id, { addAssets: [asset] }),
        '60026',
        'the enterprise sub-account did not match an employee',
      );
    }
  });

  it('refuses an unknown or revoked number with 60024, naming the field', async () => {
    const member = await addMember(world);
    const revoked = await buyAsset(world);
    await revoke(world, 'delete_asset', [{ assetNos: [revoked] }]);
    const unknown = expectFailure(
      await privileges(world, member.globalId, { addAssets: [assetNo('X')] }),
      '60024',
    );
    expect(unknown.cause).toMatch(/^addAssets\[0\]: /);
    const gone = expectFailure(
      await privileges(world, member.globalId, { deleteAssets: [revoked] }),
      '60024',
    );
    expect(gone.cause).toMatch(/^deleteAssets\[0\]: /);
  });

  it('refuses a number of another enterprise, or of a customer bound to none, with 60025', async () => {
    const member = await addMember(world);
    const other = await assetWorld(h);
    const foreign = await buyAsset(other);
    expectFailure(
      await privileges(world, member.globalId, { addAssets: [foreign] }),
      '60025',
      'asset number belongs to a different customer',
    );
    const unbound = assetNo('U');
    okData(
      await world.h.app.inject({
        method: 'POST',
        url: `/order/api/order/v1/licenseOrder/batchOrder?appKey=${world.app.appKey}&g_nonce=n${unbound}`,
        headers: { authorization: `Bearer ${world.token}` },
        payload: {
          channelCode: world.channel,
          channelOrderId: `CO${unbound}`,
          syncMode: 'sync',
          orderList: [
            {
              sequence: 1,
              channelCustomerId: `cc${unbound}`,
              licenseType: 'normal_recover_usbkey',
              orderType: 'new_buy',
              assets: [{ assetNos: [unbound], products: [productSpec()] }],
            },
          ],
        },
      }),
    );
    expectFailure(await privileges(world, member.globalId, { addAssets: [unbound] }), '60025');
  });

  it('refuses a number held by another member, or listed twice, with 60028', async () => {
    const [held, free] = [await buyAsset(world), await buyAsset(world)];
    const holder = await addMember(world);
    const member = await addMember(world);
    await assign(world, holder.globalId, [held]);
    const message = 'asset number configured more than once';
    expectFailure(await privileges(world, member.globalId, { addAssets: [held] }), '60028', message);
    expectFailure(await privileges(world, member.globalId, { addAssets: [free, free] }), '60028', message);
    expectFailure(
      await privileges(world, member.globalId, { deleteAssets: [free], addAssets: [free] }),
      '60028',
      message,
    );
  });

  it('changes nothing when any number is refused', async () => {
    const [kept, wanted] = [await buyAsset(world), await buyAsset(world)];
    const member = await addMember(world);
    await assign(world, member.globalId, [kept]);
    expectFailure(
      await privileges(world, member.globalId, { deleteAssets: [kept], addAssets: [wanted, assetNo('X')] }),
      '60024',
    );
    expect(await assetNumsOf(world, member)).toEqual([kept]);
    expect((await holders(world)).get(wanted)).toBeNull();
  });

  it('gives one asset to exactly one of two administrators assigning it at once', async () => {
    const w = await assetWorld(h);
    const console2 = await createTestApp(h, { scopes: ['auth_me'] });
    const token2 = await appToken(h, console2);
    const second = {
      ...w.admin,
      call: memberCaller(
        h,
        { token: token2 },
        await userToken(h, console2, w.admin.account, w.admin.password),
      ),
    };
    const [m1, m2] = [await addMember(w), await addMember(w)];
    const nums = [await buyAsset(w), await buyAsset(w), await buyAsset(w)];
    const rounds = await Promise.all(
      nums.map((num) =>
        Promise.all([
          w.admin.call('POST', `/enterprise/member/${m1.globalId}/privileges`, { addAssets: [num] }),
          second.call('POST', `/enterprise/member/${m2.globalId}/privileges`, { addAssets: [num] }),
        ]),
      ),
    );
    const held = await holders(w);
    rounds.forEach((round, i) => {
      const codes = round.map((r) => (r.json() as { code: number | string }).code);
      expect(codes.filter((c) => c === 0)).toHaveLength(1);
      expect(codes.filter((c) => c === '60028')).toHaveLength(1);
      const winner = codes[0] === 0 ? m1 : m2;
      expect(held.get(nums[i] as string)).toBe(winner.globalId);
    });
  });

  it('refuses a plain member with 33003, even for itself', async () => {
    const member = await addMember(world);
    const asset = await buyAsset(world);
    expectFailure(
      await member.call('POST', `/enterprise/member/${member.globalId}/privileges`, { addAssets: [asset] }),
      '33003',
    );
    expect((await holders(world)).get(asset)).toBeNull();
  });
});

memberGuardSuite(() => h, {
  method: 'POST',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/member/${enterprise.adminGlobalId}/privileges`,
  payload: () => ({ addAssets: [] }),
});
