import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { uniqueCode, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assign,
  borrow,
  buyAsset,
  buyLentLock,
  giveBack,
  okData,
  privileges,
  type AssetWorld,
} from '../support/order-fixtures.js';
import { actionsOf, audit, expectNoSecrets, history, lentAsset, startAuditWorld } from './audit-helpers.js';
import { expectFailure } from './member-helpers.js';

let h: Harness;
let world: AssetWorld;
let appId: string;

beforeAll(async () => {
  ({ h, world, appId } = await startAuditWorld());
});
afterAll(async () => h.close());

/** Who every member-center row names: the app, the caller's account, the enterprise. */
function byAdmin() {
  return { appId, operator: world.admin.account, enterpriseId: world.enterpriseGlobalId };
}

const membersPath = () => `/enterprise/${world.enterpriseGlobalId}/member`;

describe('audit of the member center', () => {
  it('records each member op 1 adds, in one call, and nothing for those it refuses', async () => {
    const names = [uniqueCode('a'), uniqueCode('b')];
    const password = 'Secret-pass-1';
    const response = await world.admin.call('POST', membersPath(), {
      userList: [
        { userName: names[0], password, name: 'A', departmentId: 3 },
        { userName: 'bad name!', password, name: 'B', departmentId: 3 },
        { userName: names[1], password, name: 'C', departmentId: 4, passwordMobile: '13800138000' },
      ],
    });
    expectFailure(response, '60027');
    const added = (response.json() as { data: { succeeded: Array<{ userName: string; globalId: string }> } })
      .data.succeeded;
    const rows = await Promise.all(added.map(async (m) => history(h, m.userName)));
    expect(rows.map((r) => r.map((e) => e.action))).toEqual([['member.added'], ['member.added']]);
    const entries = rows.flat();
    for (const [i, e] of entries.entries()) {
      expect(e).toMatchObject({
        ...byAdmin(),
        subject: added[i]?.userName,
        detail: { memberGlobalId: added[i]?.globalId, departmentId: i === 0 ? 3 : 4 },
      });
    }
    expect(new Set(entries.map((e) => e.requestId)).size).toBe(1);
    expectNoSecrets(entries, [password, '13800138000']);

    // Refused as a whole (over 100 users): nothing added, nothing audited.
    const before = await audit(h, { enterprise: world.enterpriseGlobalId, action: 'member.added' });
    const tooMany = Array.from({ length: 101 }, (_, i) => ({
      userName: `u${i}x`,
      password,
      departmentId: 1,
    }));
    expectFailure(await world.admin.call('POST', membersPath(), { userList: tooMany }), '60013');
    expect(await audit(h, { enterprise: world.enterpriseGlobalId, action: 'member.added' })).toEqual(before);
  });

  it('records an edit by the names of the fields changed, and a password reset by the member itself', async () => {
    const member = await addMember(world);
    const path = `${membersPath()}/${member.globalId}`;
    okData(await world.admin.call('PUT', path, { name: 'Renamed', passwordMobile: '+4915112345678' }));
    expectFailure(await world.admin.call('PUT', path, { name: 'x'.repeat(31) }), '30002');
    expectFailure(await member.call('PUT', `${path}/resetPassword`, { password: 'short' }), '50003');
    // The reset ends the member's own session too.
    okData(await member.call('PUT', `${path}/resetPassword`, { password: 'New-secret-22' }));

    const entries = await history(h, member.account);
    expect(entries.map((e) => [e.action, e.operator, e.detail])).toEqual([
      ['member.added', world.admin.account, { memberGlobalId: member.globalId, departmentId: 1 }],
      [
        'member.edited',
        world.admin.account,
        { memberGlobalId: member.globalId, fields: ['name', 'passwordMobile'] },
      ],
      ['member.password_reset', member.account, { memberGlobalId: member.globalId, tokensRevoked: true }],
    ]);
    expectNoSecrets(entries, ['New-secret-22', '+4915112345678', member.password]);
  });

  it('records each asset op 9 assigns and takes back, and nothing for a refused call', async () => {
    const member = await addMember(world);
    const [a, b, c] = [await buyAsset(world), await buyAsset(world), await buyAsset(world)];
    await assign(world, member.globalId, [a, b]);
    okData(await privileges(world, member.globalId, { deleteAssets: [a], addAssets: [c] }));
    // Refused: a number listed twice.
    expectFailure(await privileges(world, member.globalId, { addAssets: [c, c] }), '60028');
    expectFailure(await privileges(world, member.globalId, { deleteAssets: [b], addAssets: [b] }), '60028');

    expect(await actionsOf(h, a)).toEqual(['asset.assigned', 'asset.unassigned']);
    expect(await actionsOf(h, b)).toEqual(['asset.assigned']);
    expect(await actionsOf(h, c)).toEqual(['asset.assigned']);
    const [assigned] = await history(h, c);
    expect(assigned).toMatchObject({
      ...byAdmin(),
      detail: { assetId: await assetIdOf(world, c), memberGlobalId: member.globalId },
    });
  });

  it('records a lending and its return; a refused lending and a return with nothing lent write nothing', async () => {
    const member = await addMember(world);
    const lock = await buyLentLock(world);
    const asset = await buyAsset(world);
    await assign(world, member.globalId, [asset]);
    const assetId = await assetIdOf(world, asset);
    okData(await borrow(member, member.globalId, lock, [assetId]));
    // Refused: the asset is lent already.
    expectFailure(await borrow(member, member.globalId, lock, [assetId]), '33007');
    okData(await giveBack(member, member.globalId, lock));
    okData(await giveBack(member, member.globalId, lock));

    const entries = await history(h, lock);
    const lockAssetId = await assetIdOf(world, lock);
    expect(entries.map((e) => [e.action, e.operator, e.detail])).toEqual([
      ['lending.lent', member.account, { lockAssetId, memberGlobalId: member.globalId, assetIds: [assetId] }],
      ['lending.returned', member.account, { lockAssetId, memberGlobalId: member.globalId }],
    ]);
    expect(entries.every((e) => e.enterpriseId === world.enterpriseGlobalId && e.appId === appId)).toBe(true);
  });

  it('records what a deleted member gave back: its assets and its lent lock', async () => {
    const { member, asset, lock } = await lentAsset(world);
    okData(await world.admin.call('DELETE', `${membersPath()}/${member.globalId}`));
    // Refused: the administrator cannot be deleted.
    expectFailure(await world.admin.call('DELETE', `${membersPath()}/${world.admin.globalId}`), '33003');

    const [deleted] = (await history(h, member.account)).slice(-1);
    expect(deleted).toMatchObject({
      ...byAdmin(),
      action: 'member.deleted',
      detail: { memberGlobalId: member.globalId, assetsReleased: 1 },
    });
    const [unassigned] = (await history(h, asset)).slice(-1);
    expect(unassigned).toMatchObject({ action: 'asset.unassigned', detail: { reason: 'member_deleted' } });
    const [ended] = (await history(h, lock)).slice(-1);
    expect(ended).toMatchObject({
      ...byAdmin(),
      action: 'lending.ended',
      detail: { memberGlobalId: member.globalId, reason: 'member_deleted' },
    });
    expect(new Set([deleted, unassigned, ended].map((e) => e?.requestId)).size).toBe(1);
    expect(await actionsOf(h, world.admin.account)).not.toContain('member.deleted');
  });

  it('records a lent lock released when op 9 takes back the asset lent to it', async () => {
    const { member, asset, lock } = await lentAsset(world);
    okData(await privileges(world, member.globalId, { deleteAssets: [asset] }));
    expect(await actionsOf(h, lock)).toEqual(['lending.lent', 'lending.ended']);
    const [ended] = (await history(h, lock)).slice(-1);
    expect(ended?.detail).toMatchObject({ reason: 'asset_unassigned', memberGlobalId: member.globalId });
  });
});
