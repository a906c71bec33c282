import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { memberGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  borrow,
  buyAsset,
  buyLentLock,
  listAssetNums,
  listLentLocks,
  okData,
  productNames,
  productSpec,
  productsUnder,
  revoke,
  setLocked,
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

/** A member holding one fresh asset (with the given products), and a fresh lent lock. */
async function holding(
  w: AssetWorld,
  products?: unknown[],
): Promise<{ member: MemberSession; asset: string; assetId: string; lock: string }> {
  const lock = await buyLentLock(w);
  const asset = await buyAsset(w, products);
  const member = await addMember(w);
  await assign(w, member.globalId, [asset]);
  return { member, asset, assetId: await assetIdOf(w, asset), lock };
}

async function borrowNumOf(w: AssetWorld, memberGlobalId: string): Promise<string | null | undefined> {
  const page = okData<{ list: Array<{ globalId: string; borrowNum: string | null }> }>(
    await w.admin.call('GET', `/enterprise/${w.enterpriseGlobalId}/members?pageSize=500`),
  );
  return page.list.find((m) => m.globalId === memberGlobalId)?.borrowNum;
}

async function lentFlag(w: AssetWorld, assetNum: string): Promise<boolean | undefined> {
  return (await listAssetNums(w)).find((i) => i.assetNum === assetNum)?.borrowedFlag;
}

describe('member op 10: lend assets to a lent lock', () => {
  it('moves the entitlements onto the lock and marks both sides lent', async () => {
    const { member, asset, assetId, lock } = await holding(world, [productSpec({ productName: 'Lent' })]);
    const response = await borrow(member, member.globalId, lock, [assetId]);
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });

    expect(await lentFlag(world, asset)).toBe(true);
    expect(await lentFlag(world, lock)).toBe(true);
    expect((await listLentLocks(world)).find((l) => l.assetNum === lock)).toMatchObject({
      borrowedFlag: true,
      cloudAccountGlobalId: member.globalId,
    });
    expect(await borrowNumOf(world, member.globalId)).toBe(lock);
    const onLock = await productsUnder(world, await assetIdOf(world, lock));
    expect(productNames(onLock)).toEqual(['Lent', 'Own']);
    expect(onLock.productInstanceList.find((p) => p.productName === 'Lent')).toMatchObject({
      assetNum: asset,
      limitConcurrent: 1,
    });
  });

  it('lets the administrator lend for a member, several assets at once and more later', async () => {
    const { member, asset, assetId, lock } = await holding(world);
    const [second, third] = [await buyAsset(world), await buyAsset(world)];
    await assign(world, member.globalId, [second, third]);
    const secondId = await assetIdOf(world, second);
    okData(await borrow(world.admin, member.globalId, lock, [assetId, secondId, assetId]));
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(world, third)]));
    for (const num of [asset, second, third]) expect(await lentFlag(world, num)).toBe(true);
    expect((await listLentLocks(world)).find((l) => l.assetNum === lock)?.cloudAccountGlobalId).toBe(
      member.globalId,
    );
  });

  it('lends products without a stated node count', async () => {
    const { member, assetId, lock } = await holding(world, [productSpec({ limitConcurrent: null })]);
    okData(await borrow(member, member.globalId, lock, [assetId]));
  });

  it('refuses a missing or empty field with 40000', async () => {
    const { member, assetId, lock } = await holding(world);
    const call = (body: unknown) => member.call('POST', `/enterprise/member/${member.globalId}/borrow`, body);
    expect(expectFailure(await call({ assetIDs: [assetId] }), '40000').message).toBe(
      'borrowedUsbKey: is required',
    );
    expect(expectFailure(await call({ borrowedUsbKey: lock }), '40000').message).toBe(
      'assetIDs: is required',
    );
    expectFailure(await call({ borrowedUsbKey: lock, assetIDs: [] }), '40000');
    expectFailure(await call({ borrowedUsbKey: '', assetIDs: [assetId] }), '40000');
    expectFailure(await call({ borrowedUsbKey: lock, assetIDs: [1] }), '40000');
  });

  it('refuses an unknown, deleted or foreign member with 60026', async () => {
    const { member, assetId, lock } = await holding(world);
    const other = await assetWorld(h);
    for (const id of [randomUUID(), other.admin.globalId]) {
      expectFailure(
        await borrow(world.admin, id, lock, [assetId]),
        '60026',
        'the enterprise sub-account did not match an employee',
      );
    }
    okData(
      await world.admin.call('DELETE', `/enterprise/${world.enterpriseGlobalId}/member/${member.globalId}`),
    );
    expectFailure(await borrow(world.admin, member.globalId, lock, [assetId]), '60026');
  });

  it('refuses a lock that is unknown, not a lent lock, disabled, revoked or foreign with 33008', async () => {
    const { member, asset, assetId } = await holding(world);
    const disabled = await buyLentLock(world);
    expect(await setLocked(world, [disabled], true)).toEqual([1]);
    const revoked = await buyLentLock(world);
    await revoke(world, 'delete_asset', [{ assetNos: [revoked] }]);
    const other = await assetWorld(h);
    const foreign = await buyLentLock(other);
    for (const lock of ['NO-SUCH-LOCK', await buyAsset(world), disabled, revoked, foreign]) {
      expectFailure(
        await borrow(member, member.globalId, lock, [assetId]),
        '33008',
        'lent lock status abnormal',
      );
    }
    expect(await lentFlag(world, asset)).toBe(false);
  });

  it('lends to a lock again once it is enabled', async () => {
    const { member, assetId, lock } = await holding(world);
    await setLocked(world, [lock], true);
    expectFailure(await borrow(member, member.globalId, lock, [assetId]), '33008');
    await setLocked(world, [lock], false);
    okData(await borrow(member, member.globalId, lock, [assetId]));
  });

  it('refuses a lock lent to another member with 33018', async () => {
    const first = await holding(world);
    okData(await borrow(first.member, first.member.globalId, first.lock, [first.assetId]));
    const second = await holding(world);
    expectFailure(
      await borrow(second.member, second.member.globalId, first.lock, [second.assetId]),
      '33018',
      'lent lock already lent to another employee',
    );
    expect(await lentFlag(world, second.asset)).toBe(false);
  });

  it('refuses an asset not assigned to the member with 33003', async () => {
    const { member, assetId, lock } = await holding(world);
    const free = await assetIdOf(world, await buyAsset(world));
    const someoneElse = await holding(world);
    const other = await assetWorld(h);
    const foreign = await assetIdOf(other, await buyAsset(other));
    for (const id of [free, someoneElse.assetId, foreign, randomUUID()]) {
      expectFailure(
        await borrow(member, member.globalId, lock, [assetId, id]),
        '33003',
        'employee permission insufficient',
      );
    }
    expect((await listLentLocks(world)).find((l) => l.assetNum === lock)?.borrowedFlag).toBe(false);
  });

  it('refuses a plain member lending for another member with 33003', async () => {
    const { member, assetId, lock } = await holding(world);
    const stranger = await addMember(world);
    expectFailure(await borrow(stranger, member.globalId, lock, [assetId]), '33003');
  });

  it('refuses an asset lent already with 33007', async () => {
    const { member, assetId, lock } = await holding(world);
    okData(await borrow(member, member.globalId, lock, [assetId]));
    expectFailure(
      await borrow(member, member.globalId, lock, [assetId]),
      '33007',
      'already lent to another lent lock',
    );
  });

  it('refuses a product without a free node with 33006', async () => {
    const { member, asset, assetId, lock } = await holding(world, [
      productSpec({ productName: 'Fine' }),
      productSpec({ productName: 'Nodeless', limitConcurrent: 0 }),
    ]);
    expectFailure(await borrow(member, member.globalId, lock, [assetId]), '33006', 'insufficient nodes');
    expect(await lentFlag(world, asset)).toBe(false);
  });

  it('refuses lending a lent lock, an asset with no products, or onto a second lock with 33009', async () => {
    const { member, assetId, lock } = await holding(world);
    const otherLock = await buyLentLock(world);
    await assign(world, member.globalId, [otherLock]);
    expectFailure(
      await borrow(member, member.globalId, lock, [await assetIdOf(world, otherLock)]),
      '33009',
      'lend request failed',
    );

    const emptied = productSpec();
    const bare = await buyAsset(world, [emptied]);
    await revoke(world, 'delete_product', [
      { assetNos: [bare], products: [{ crmProductId: emptied.crmProductId, productUri: 'gms-2001' }] },
    ]);
    await assign(world, member.globalId, [bare]);
    expectFailure(await borrow(member, member.globalId, lock, [await assetIdOf(world, bare)]), '33009');

    okData(await borrow(member, member.globalId, lock, [assetId]));
    const more = await buyAsset(world);
    await assign(world, member.globalId, [more]);
    const onSecond = expectFailure(
      await borrow(member, member.globalId, otherLock, [await assetIdOf(world, more)]),
      '33009',
    );
    expect(onSecond.cause).toMatch(/another lent lock/);
  });

  it('gives a lock to exactly one of two members lending to it at once', async () => {
    const w = await assetWorld(h);
    const [a, b] = [await addMember(w), await addMember(w)];
    for (let round = 0; round < 3; round++) {
      const lock = await buyLentLock(w);
      const [ax, bx] = [await buyAsset(w), await buyAsset(w)];
      await assign(w, a.globalId, [ax]);
      await assign(w, b.globalId, [bx]);
      const [axId, bxId] = [await assetIdOf(w, ax), await assetIdOf(w, bx)];
      const replies = await Promise.all([
        borrow(a, a.globalId, lock, [axId]),
        borrow(b, b.globalId, lock, [bxId]),
      ]);
      const codes = replies.map((r) => (r.json() as { code: number | string }).code);
      expect(codes.filter((c) => c === 0)).toHaveLength(1);
      expect(codes.filter((c) => c === '33018')).toHaveLength(1);
      const [winner, loser] = codes[0] === 0 ? [a, b] : [b, a];
      expect((await listLentLocks(w)).find((l) => l.assetNum === lock)?.cloudAccountGlobalId).toBe(
        winner.globalId,
      );
      expect(await lentFlag(w, winner === a ? ax : bx)).toBe(true);
      expect(await lentFlag(w, loser === a ? ax : bx)).toBe(false);
      // A member holds one lent lock at a time: the winner gives this one back for the next round.
      okData(
        await w.admin.call('POST', `/enterprise/member/${winner.globalId}/return`, { borrowedUsbKey: lock }),
      );
    }
  });
});

memberGuardSuite(() => h, {
  method: 'POST',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/member/${enterprise.adminGlobalId}/borrow`,
  payload: () => ({ borrowedUsbKey: 'NO-SUCH-LOCK', assetIDs: [randomUUID()] }),
});
