import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  borrow,
  buy,
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

// What the order service does to assets shows in the member center at once: revocations, a
// disabled lent lock and a lock turned back into a plain asset end or trim the lendings they
// touch, in the order's own transaction. So does deleting a member.

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

interface Lent {
  w: AssetWorld;
  member: MemberSession;
  lock: string;
  lockId: string;
  assets: string[];
  products: Array<Record<string, unknown>>;
}

/** A member that lent two assets, one product each, to a lent lock. */
async function lentTwo(): Promise<Lent> {
  const w = await assetWorld(h);
  const lock = await buyLentLock(w);
  const products = [productSpec({ productName: 'First' }), productSpec({ productName: 'Second' })];
  const assets = [await buyAsset(w, [products[0]]), await buyAsset(w, [products[1]])];
  const member = await addMember(w);
  await assign(w, member.globalId, assets);
  const ids = await Promise.all(assets.map((a) => assetIdOf(w, a)));
  okData(await borrow(member, member.globalId, lock, ids));
  return {
    w,
    member,
    lock,
    lockId: await assetIdOf(w, lock),
    assets,
    products: products as Array<Record<string, unknown>>,
  };
}

async function borrowNumOf(w: AssetWorld, memberGlobalId: string): Promise<string | null | undefined> {
  const page = okData<{ list: Array<{ globalId: string; borrowNum: string | null }> }>(
    await w.admin.call('GET', `/enterprise/${w.enterpriseGlobalId}/members?pageSize=500`),
  );
  return page.list.find((m) => m.globalId === memberGlobalId)?.borrowNum;
}

async function flags(w: AssetWorld): Promise<Map<string, boolean>> {
  return new Map((await listAssetNums(w)).map((i) => [i.assetNum, i.borrowedFlag]));
}

async function lockLent(w: AssetWorld, lock: string): Promise<boolean | undefined> {
  return (await listLentLocks(w)).find((l) => l.assetNum === lock)?.borrowedFlag;
}

describe('order-side changes and lending', () => {
  it('delete_asset of a lent asset takes its entitlements off the lock; the lock stays lent for the rest', async () => {
    const { w, member, lock, lockId, assets } = await lentTwo();
    await revoke(w, 'delete_asset', [{ assetNos: [assets[0]] }]);
    expect(productNames(await productsUnder(w, lockId))).toEqual(['Own', 'Second']);
    expect(await lockLent(w, lock)).toBe(true);

    await revoke(w, 'delete_asset', [{ assetNos: [assets[1]] }]);
    expect(productNames(await productsUnder(w, lockId))).toEqual(['Own']);
    expect(await lockLent(w, lock)).toBe(false);
    expect(await borrowNumOf(w, member.globalId)).toBeNull();
    expect([...(await flags(w)).keys()]).toEqual([lock]);
  });

  it('delete_asset of the lent lock gives everything lent to it back', async () => {
    const { w, member, lock, assets } = await lentTwo();
    await revoke(w, 'delete_asset', [{ assetNos: [lock] }]);
    const now = await flags(w);
    expect(assets.map((a) => now.get(a))).toEqual([false, false]);
    expect(await listLentLocks(w)).toEqual([]);
    expect(await borrowNumOf(w, member.globalId)).toBeNull();
  });

  it('delete_product of a lent product takes it off the lock; the last one ends that lending', async () => {
    const { w, member, lock, lockId, assets, products } = await lentTwo();
    const first = products[0] as { crmProductId: string };
    await revoke(w, 'delete_product', [
      { assetNos: [assets[0]], products: [{ crmProductId: first.crmProductId, productUri: 'gms-2001' }] },
    ]);
    expect(productNames(await productsUnder(w, lockId))).toEqual(['Own', 'Second']);
    const now = await flags(w);
    expect(assets.map((a) => now.get(a))).toEqual([false, true]);
    expect(await lockLent(w, lock)).toBe(true);
    expect(await borrowNumOf(w, member.globalId)).toBe(lock);
  });

  it('delete_product keeps a lending that still has products on the lock', async () => {
    const w = await assetWorld(h);
    const lock = await buyLentLock(w);
    const [keep, drop] = [productSpec({ productName: 'Keep' }), productSpec({ productName: 'Drop' })];
    const asset = await buyAsset(w, [keep, drop]);
    const member = await addMember(w);
    await assign(w, member.globalId, [asset]);
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(w, asset)]));
    await revoke(w, 'delete_product', [
      { assetNos: [asset], products: [{ crmProductId: drop.crmProductId, productUri: 'gms-2001' }] },
    ]);
    expect(productNames(await productsUnder(w, await assetIdOf(w, lock)))).toEqual(['Keep', 'Own']);
    expect((await flags(w)).get(asset)).toBe(true);
  });

  it('disabling a lent lock (order op 6) gives everything back; enabling it lends nothing again', async () => {
    const { w, member, lock, lockId, assets } = await lentTwo();
    expect(await setLocked(w, [lock], true)).toEqual([1]);
    const now = await flags(w);
    expect(assets.map((a) => now.get(a))).toEqual([false, false]);
    expect(await lockLent(w, lock)).toBe(false);
    expect(await borrowNumOf(w, member.globalId)).toBeNull();
    expect(await setLocked(w, [lock], false)).toEqual([1]);
    expect(productNames(await productsUnder(w, lockId))).toEqual(['Own']);
  });

  it('disabling a lent asset leaves its lending alone', async () => {
    const { w, lock, assets } = await lentTwo();
    expect(await setLocked(w, [assets[0] as string], true)).toEqual([1]);
    expect((await flags(w)).get(assets[0] as string)).toBe(true);
    expect(await lockLent(w, lock)).toBe(true);
  });

  it('a new purchase that makes the lent lock a plain asset gives everything back', async () => {
    const { w, lock, assets } = await lentTwo();
    await buy(w, [{ assetNos: [lock], borrowedUsbKey: false, products: [productSpec()] }]);
    expect(await listLentLocks(w)).toEqual([]);
    const now = await flags(w);
    expect(assets.map((a) => now.get(a))).toEqual([false, false]);
  });

  it('a new purchase on a lent lock that keeps it one keeps its lendings', async () => {
    const { w, lock, assets } = await lentTwo();
    await buy(w, [{ assetNos: [lock], products: [productSpec()] }]);
    expect(await lockLent(w, lock)).toBe(true);
    expect((await flags(w)).get(assets[0] as string)).toBe(true);
  });

  it('deleting the member (member op 4) releases its lent lock and its assets', async () => {
    const { w, member, lock, lockId, assets } = await lentTwo();
    okData(await w.admin.call('DELETE', `/enterprise/${w.enterpriseGlobalId}/member/${member.globalId}`));
    expect(await lockLent(w, lock)).toBe(false);
    expect(productNames(await productsUnder(w, lockId))).toEqual(['Own']);
    const items = new Map((await listAssetNums(w)).map((i) => [i.assetNum, i]));
    for (const a of assets)
      expect(items.get(a)).toMatchObject({ cloudAccountGlobalId: null, borrowedFlag: false });
  });

  it('ends consistent when a revocation and a lending of the same asset race', async () => {
    const w = await assetWorld(h);
    const member = await addMember(w);
    for (let round = 0; round < 3; round++) {
      const lock = await buyLentLock(w);
      const asset = await buyAsset(w);
      await assign(w, member.globalId, [asset]);
      const id = await assetIdOf(w, asset);
      const [lent] = await Promise.all([
        borrow(member, member.globalId, lock, [id]),
        revoke(w, 'delete_asset', [{ assetNos: [asset] }]),
      ]);
      // Whichever came first, the revoked asset is lent to nothing and the lock carries nothing.
      expect(['0', '33003']).toContain(String((lent.json() as { code: unknown }).code));
      expect(await lockLent(w, lock)).toBe(false);
      expect(await borrowNumOf(w, member.globalId)).toBeNull();
    }
  });

  it('ends consistent when disabling a lent lock and lending to it race', async () => {
    const w = await assetWorld(h);
    const member = await addMember(w);
    for (let round = 0; round < 3; round++) {
      const lock = await buyLentLock(w);
      const asset = await buyAsset(w);
      await assign(w, member.globalId, [asset]);
      const [lent] = await Promise.all([
        borrow(member, member.globalId, lock, [await assetIdOf(w, asset)]),
        setLocked(w, [lock], true),
      ]);
      expect(['0', '33008']).toContain(String((lent.json() as { code: unknown }).code));
      expect(await lockLent(w, lock)).toBe(false);
      expect((await flags(w)).get(asset)).toBe(false);
    }
  });
});
