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
  listLentLocks,
  okData,
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

const path = (w: AssetWorld) => `/enterprise/${w.enterpriseGlobalId}/asset/borrowUsbKeys`;

describe('member op 8: list lent locks', () => {
  it('lists only lent locks, each with whether and to whom it is lent now', async () => {
    const w = await assetWorld(h);
    const idle = await buyLentLock(w);
    const busy = await buyLentLock(w);
    const plain = await buyAsset(w);
    const member = await addMember(w);
    await assign(w, member.globalId, [plain]);
    okData(await borrow(member, member.globalId, busy, [await assetIdOf(w, plain)]));

    expect(await listLentLocks(w)).toEqual([
      { assetId: await assetIdOf(w, idle), assetNum: idle, borrowedFlag: false, cloudAccountGlobalId: null },
      {
        assetId: await assetIdOf(w, busy),
        assetNum: busy,
        borrowedFlag: true,
        cloudAccountGlobalId: member.globalId,
      },
    ]);
  });

  it('follows a return at once', async () => {
    const lock = await buyLentLock(world);
    const asset = await buyAsset(world);
    const member = await addMember(world);
    await assign(world, member.globalId, [asset]);
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(world, asset)]));
    okData(await giveBack(member, member.globalId, lock));
    expect((await listLentLocks(world)).find((l) => l.assetNum === lock)).toMatchObject({
      borrowedFlag: false,
      cloudAccountGlobalId: null,
    });
  });

  it('leaves out revoked locks and other enterprises’ locks', async () => {
    const w = await assetWorld(h);
    const kept = await buyLentLock(w);
    const gone = await buyLentLock(w);
    await revoke(w, 'delete_asset', [{ assetNos: [gone] }]);
    const other = await assetWorld(h);
    await buyLentLock(other);
    expect((await listLentLocks(w)).map((l) => l.assetNum)).toEqual([kept]);
  });

  it('refuses an enterprise bound to no customer with 60017', async () => {
    const bare = await adminSession(h);
    expectFailure(
      await bare.call('GET', `/enterprise/${bare.enterprise.globalId}/asset/borrowUsbKeys`),
      '60017',
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
  path: ({ enterprise }) => `${ME_PREFIX}/enterprise/${enterprise.globalId}/asset/borrowUsbKeys`,
});
