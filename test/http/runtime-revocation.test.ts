import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { userToken } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
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
  productSpec,
  revoke,
  setLocked,
} from '../support/order-fixtures.js';
import {
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
  lockWith,
} from './runtime-helpers.js';

// Changes made through the order service and the member center reach running copies: the next
// heartbeat answers 90009 with the reason, and the change is in the audit log.

let h: Harness;
let world: RuntimeWorld;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
});
afterAll(async () => h.close());

async function runningOnLock(overrides: Record<string, unknown> = {}) {
  const { assetNum, crmProductId } = await lockWith(world, overrides);
  const fp = fingerprint();
  const lease = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }));
  return { assetNum, crmProductId, fp, lease };
}

describe('revocation reaches the next heartbeat', () => {
  it('order op 6 locking the asset revokes; unlocking lets the copy check out again', async () => {
    const { assetNum, crmProductId, fp, lease } = await runningOnLock();
    leaseOf(await heartbeat(world, lease, fp));
    await setLocked(world, [assetNum], true);
    expect(refusalOf(await heartbeat(world, lease, fp), '90009')).toBe(
      'the lease was revoked: the asset was disabled',
    );
    // Still revoked on the next try: the lease ended.
    refusalOf(await heartbeat(world, lease, fp), '90009');
    refusalOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }), '90002');
    await setLocked(world, [assetNum], false);
    const again = leaseOf(await checkOut(world, { assetNum, crmProductId, fingerprint: fp }));
    expect(again.status).toBe('granted');
    expect(again.leaseId).not.toBe(lease.leaseId);

    const audit = await h.database.db
      .selectFrom('audit_log')
      .select(['detail'])
      .where('action', '=', 'lease.revoked')
      .where('subject', '=', assetNum)
      .execute();
    expect(audit.map((r) => r.detail)).toEqual([
      expect.objectContaining({ leaseId: lease.leaseId, reason: 'the asset was disabled' }),
    ]);
  });

  it('a delete_product order withdraws the licence', async () => {
    const { assetNum, crmProductId, fp, lease } = await runningOnLock();
    await revoke(world, 'delete_product', [{ assetNos: [assetNum], products: [{ crmProductId }] }]);
    expect(refusalOf(await heartbeat(world, lease, fp), '90009')).toBe(
      'the lease was revoked: the license was withdrawn',
    );
  });

  it('member op 9 taking the asset away revokes the member’s lease', async () => {
    const member = await addMember(world);
    const token = await userToken(h, world.app, member.account, member.password);
    const product = productSpec();
    const assetNum = await buyAsset(world, [product]);
    await assign(world, member.globalId, [assetNum]);
    const fp = fingerprint();
    const lease = leaseOf(
      await checkOut(world, { crmProductId: product.crmProductId, fingerprint: fp }, token),
    );
    leaseOf(await heartbeat(world, lease, fp));
    okData(await privileges(world, member.globalId, { deleteAssets: [assetNum] }));
    expect(refusalOf(await heartbeat(world, lease, fp), '90009')).toBe(
      'the lease was revoked: the asset is no longer assigned to the member',
    );
  });

  it('a lent lock runs the one lent node; returning the lending revokes its lease', async () => {
    const lock = await buyLentLock(world);
    const product = productSpec({ limitConcurrent: 3 });
    const asset = await buyAsset(world, [product]);
    const member = await addMember(world);
    await assign(world, member.globalId, [asset]);
    okData(await borrow(member, member.globalId, lock, [await assetIdOf(world, asset)]));

    const crmProductId = product.crmProductId as string;
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { assetNum: lock, crmProductId, fingerprint: fp }));
    expect(lease.assetNum).toBe(asset);
    // The lent lock holds one node: a second machine on the lock is refused.
    expect(
      refusalOf(await checkOut(world, { assetNum: lock, crmProductId, fingerprint: fingerprint() }), '90005'),
    ).toBe('all 1 seats of the product are in use (1 in use)');
    // The member keeps the other two nodes.
    const token = await userToken(h, world.app, member.account, member.password);
    leaseOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }, token));
    leaseOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }, token));
    refusalOf(await checkOut(world, { crmProductId, fingerprint: fingerprint() }, token), '90005');

    okData(await giveBack(member, member.globalId, lock));
    expect(refusalOf(await heartbeat(world, lease, fp), '90009')).toBe(
      'the lease was revoked: the lending was returned',
    );
    refusalOf(await checkOut(world, { assetNum: lock, crmProductId, fingerprint: fp }), '90001');
  });
});
