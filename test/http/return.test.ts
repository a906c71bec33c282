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
  giveBack,
  listAssetNums,
  listLentLocks,
  okData,
  productNames,
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

/** A member that has lent one fresh asset to a fresh lent lock. */
async function lending(
  w: AssetWorld,
): Promise<{ member: MemberSession; asset: string; assetId: string; lock: string }> {
  const lock = await buyLentLock(w);
  const asset = await buyAsset(w);
  const member = await addMember(w);
  await assign(w, member.globalId, [asset]);
  const assetId = await assetIdOf(w, asset);
  okData(await borrow(member, member.globalId, lock, [assetId]));
  return { member, asset, assetId, lock };
}

async function borrowNumOf(w: AssetWorld, memberGlobalId: string): Promise<string | null | undefined> {
  const page = okData<{ list: Array<{ globalId: string; borrowNum: string | null }> }>(
    await w.admin.call('GET', `/enterprise/${w.enterpriseGlobalId}/members?pageSize=500`),
  );
  return page.list.find((m) => m.globalId === memberGlobalId)?.borrowNum;
}

async function lockState(w: AssetWorld, lock: string) {
  return (await listLentLocks(w)).find((l) => l.assetNum === lock);
}

describe('returning what was lent to a lent lock', () => {
  it('gives every entitlement back and frees both sides', async () => {
    const { member, asset, assetId, lock } = await lending(world);
    const response = await giveBack(member, member.globalId, lock);
    expect(response.json()).toEqual({ code: 0, message: 'success', data: null });

    expect(productNames(await productsUnder(world, await assetIdOf(world, lock)))).toEqual(['Own']);
    expect((await listAssetNums(world)).find((i) => i.assetNum === asset)).toMatchObject({
      cloudAccountGlobalId: member.globalId,
      borrowedFlag: false,
    });
    expect(await lockState(world, lock)).toMatchObject({ borrowedFlag: false, cloudAccountGlobalId: null });
    expect((await listAssetNums(world)).find((i) => i.assetNum === lock)?.borrowedFlag).toBe(false);
    expect(await borrowNumOf(world, member.globalId)).toBeNull();
    // Free again: the member may lend the asset to another lock.
    okData(await borrow(member, member.globalId, await buyLentLock(world), [assetId]));
  });

  it('lets the administrator return for a member', async () => {
    const { member, lock } = await lending(world);
    okData(await giveBack(world.admin, member.globalId, lock));
    expect(await lockState(world, lock)).toMatchObject({ borrowedFlag: false });
  });

  it('answers success and changes nothing for a lock lent to nobody', async () => {
    const lock = await buyLentLock(world);
    const member = await addMember(world);
    okData(await giveBack(member, member.globalId, lock));
    const { member: lender, lock: lent } = await lending(world);
    okData(await giveBack(lender, lender.globalId, lent));
    okData(await giveBack(lender, lender.globalId, lent));
    expect(await lockState(world, lock)).toMatchObject({ borrowedFlag: false });
  });

  it('answers success for a disabled lock, whose lendings ended when it was disabled', async () => {
    const { member, asset, lock } = await lending(world);
    await setLocked(world, [lock], true);
    okData(await giveBack(member, member.globalId, lock));
    expect((await listAssetNums(world)).find((i) => i.assetNum === asset)?.borrowedFlag).toBe(false);
  });

  it('refuses a lock lent to another member with 33018 and keeps the lending', async () => {
    const { lock } = await lending(world);
    const other = await addMember(world);
    expectFailure(
      await giveBack(other, other.globalId, lock),
      '33018',
      'lent lock already lent to another employee',
    );
    expect(await lockState(world, lock)).toMatchObject({ borrowedFlag: true });
  });

  it('refuses a number that is no lent lock of the enterprise with 33008', async () => {
    const member = await addMember(world);
    const revoked = await buyLentLock(world);
    await revoke(world, 'delete_asset', [{ assetNos: [revoked] }]);
    const other = await assetWorld(h);
    const foreign = await lending(other);
    for (const lock of ['NO-SUCH-LOCK', await buyAsset(world), revoked, foreign.lock]) {
      expectFailure(await giveBack(member, member.globalId, lock), '33008', 'lent lock status abnormal');
    }
    expect(await lockState(other, foreign.lock)).toMatchObject({ borrowedFlag: true });
  });

  it('refuses a plain member returning for another member with 33003', async () => {
    const { member, lock } = await lending(world);
    const stranger = await addMember(world);
    expectFailure(await giveBack(stranger, member.globalId, lock), '33003');
    expect(await lockState(world, lock)).toMatchObject({ borrowedFlag: true });
  });

  it('refuses a missing lock number with 40000 and an unknown member with 60026', async () => {
    const { member, lock } = await lending(world);
    const missing = expectFailure(
      await member.call('POST', `/enterprise/member/${member.globalId}/return`, {}),
      '40000',
    );
    expect(missing.message).toBe('borrowedUsbKey: is required');
    expectFailure(await giveBack(world.admin, randomUUID(), lock), '60026');
  });
});

memberGuardSuite(() => h, {
  method: 'POST',
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/member/${enterprise.adminGlobalId}/return`,
  payload: () => ({ borrowedUsbKey: 'NO-SUCH-LOCK' }),
});
