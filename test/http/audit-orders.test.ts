import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.repository.js';
import { uniqueCode, type Harness } from '../support/harness.js';
import { okData, productSpec, revoke, setLocked, type AssetWorld } from '../support/order-fixtures.js';
import { actionsOf, audit, expectNoSecrets, history, lentAsset, startAuditWorld } from './audit-helpers.js';
import { batch, expectFailure, newBuy, postBatch, product, submit } from './order-helpers.js';

let h: Harness;
let world: AssetWorld;
let appId: string;

beforeAll(async () => {
  ({ h, world, appId } = await startAuditWorld());
});
afterAll(async () => h.close());

/** Every row the world's app wrote, newest first. */
const appRows = () => audit(h, { app: appId, limit: 1000 });

/** Applies waiting async batches until these orders are settled (any instance's worker may). */
async function settle(licenseOrderIds: string[]): Promise<void> {
  for (let i = 0; i < 400; i += 1) {
    while (await h.app.services.orders.processNextBatch()) {
      // one batch per call
    }
    const pending = await h.database.db
      .selectFrom('license_orders')
      .select('id')
      .where('id', 'in', licenseOrderIds)
      .where('status', '=', 'pending')
      .execute();
    if (pending.length === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('orders still pending');
}

describe('audit of the order service', () => {
  it('records a binding to a new enterprise once; a repeat and a refusal write nothing', async () => {
    const channelCustomerId = uniqueCode('cc');
    const body = { channelCode: world.channel, channelCustomerId, enterpriseName: 'Bound Ltd' };
    const bound = okData<{ customerId: string; enterpriseGlobalId: string }>(
      await world.order('POST', '/enterprise/user/bind', body),
    );
    okData(await world.order('POST', '/enterprise/user/bind', body));
    expectFailure(
      await world.order('POST', '/enterprise/user/bind', {
        ...body,
        channelCustomerId: uniqueCode('cc'),
        enterpriseName: ' ',
      }),
      '13004',
    );
    const entries = await history(h, bound.customerId);
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'customer.bound',
        appId,
        operator: null,
        enterpriseId: bound.enterpriseGlobalId,
        detail: expect.objectContaining({
          channelCode: world.channel,
          channelCustomerId,
          customerCreated: true,
          enterpriseGlobalId: bound.enterpriseGlobalId,
        }),
      }),
    ]);
  });

  it("records op 2's enterprise with the members it makes for cloud accounts, and op 4's fields", async () => {
    const crmCustomerId = uniqueCode('crm');
    await submit(
      h,
      world,
      batch(world, [
        newBuy({ crmCustomerId, licenseType: 'cloud_account', assets: [{ products: [product()] }] }),
      ]),
    );
    const created = okData<{ enterpriseGlobalId: string; members: Array<{ memberIdentity: string }> }>(
      await world.order('POST', '/enterprise/user/create', { crmCustomerId, customerName: 'Crm Co' }),
    );
    okData(await world.order('POST', '/enterprise/user/create', { crmCustomerId, customerName: 'Crm Co' }));
    const rows = (await audit(h, { enterprise: created.enterpriseGlobalId })).reverse();
    expect(rows.map((e) => e.action)).toEqual(['customer.created', 'member.added', 'asset.assigned']);
    expect(rows[0]?.detail).toMatchObject({ crmCustomerId, customerCreated: false, members: 1 });
    expect(rows.every((e) => e.appId === appId && e.requestId === rows[0]?.requestId)).toBe(true);
    const customerId = rows[0]?.subject as string;

    const update = (payload: object) =>
      world.order('POST', '/enterprise/user/update', { crmCustomerId, ...payload });
    expect((await update({ customerName: 'Crm Renamed', address: '1 Main St' })).statusCode).toBe(200);
    expectFailure(await world.order('POST', '/enterprise/user/update', { crmCustomerId: 'nobody' }), '13004');
    const [updated] = (await history(h, customerId)).slice(-1);
    expect(updated).toMatchObject({
      action: 'customer.updated',
      enterpriseId: created.enterpriseGlobalId,
      detail: { crmCustomerId, fields: ['customerName', 'address'], enterpriseRenamed: true },
    });
    expectNoSecrets([updated as AuditRecord], ['1 Main St']);
  });

  it("records a caller's id holding a lone UTF-16 surrogate as the change stores it, never failing it", async () => {
    const crmCustomerId = `${uniqueCode('crm')}\ud800`;
    const created = okData<{ enterpriseGlobalId: string }>(
      await world.order('POST', '/enterprise/user/create', { crmCustomerId, customerName: 'Half Co' }),
    );
    const [row] = await audit(h, { enterprise: created.enterpriseGlobalId, action: 'customer.created' });
    expect(row?.detail.crmCustomerId).toBe(crmCustomerId.replace('\ud800', '\ufffd'));
  });

  it('records one row per accepted sync order, with counts and no license password', async () => {
    const nums = [uniqueCode('N'), uniqueCode('N')];
    const body = batch(world, [
      newBuy({
        sequence: 1,
        channelCustomerId: world.channelCustomerId,
        assets: [{ assetNos: nums, products: [product({ passwords: ['lic-pass-81'] })] }],
      }),
      newBuy({ sequence: 2, channelCustomerId: world.channelCustomerId }),
    ]);
    const result = await submit(h, world, body);
    // A retry is answered from the record: no new row.
    await submit(h, world, body);
    const entries = (await audit(h, { app: appId, action: 'order.accepted', limit: 2 })).reverse();
    expect(entries.map((e) => e.subject)).toEqual(result.map((r) => r.licenseOrderId));
    expect(entries[0]).toMatchObject({
      appId,
      operator: null,
      enterpriseId: world.enterpriseGlobalId,
      detail: {
        channelCode: world.channel,
        channelOrderId: body.channelOrderId,
        sequence: 1,
        syncMode: 'sync',
        status: 'completed',
        orderType: 'new_buy',
        licenseType: 'normal_recover_usbkey',
        customerId: world.customerId,
        srcLicenseOrderId: null,
        assets: 1,
        assetNumbers: 2,
      },
    });
    expectNoSecrets(entries, ['lic-pass-81']);
  });

  it('writes nothing for a refused batch, however far it got', async () => {
    const before = await appRows();
    const refused = batch(world, [
      newBuy({ sequence: 1, channelCustomerId: world.channelCustomerId }),
      { ...newBuy({ sequence: 2 }), orderType: 'delete_asset', assets: [{ assetNos: ['no-such-asset'] }] },
    ]);
    expectFailure(await postBatch(h, world, refused), '13004');
    expect(await appRows()).toEqual(before);
  });

  it('records the async outcome of each order: completed, or failed with nothing of it applied', async () => {
    const { asset, lock } = await lentAsset(world);
    const ok = await submit(
      h,
      world,
      batch(world, [newBuy({ channelCustomerId: world.channelCustomerId })], { syncMode: 'async' }),
    );
    // The first order would end the lending; the second fails the batch, so nothing is applied.
    const failing = await submit(
      h,
      world,
      batch(
        world,
        [
          {
            ...newBuy({ sequence: 1, channelCustomerId: world.channelCustomerId }),
            orderType: 'delete_asset',
            assets: [{ assetNos: [asset] }],
          },
          {
            ...newBuy({ sequence: 2, channelCustomerId: world.channelCustomerId }),
            orderType: 'delete_asset',
            assets: [{ assetNos: ['no-such-asset'] }],
          },
        ],
        { syncMode: 'async' },
      ),
    );
    const ids = [...ok, ...failing].map((r) => r.licenseOrderId);
    await settle(ids);
    const outcomes = await Promise.all(ids.map((id) => history(h, id)));
    expect(outcomes.map((rows) => rows.map((e) => e.action))).toEqual([
      ['order.accepted', 'order.completed'],
      ['order.accepted', 'order.failed'],
      ['order.accepted', 'order.failed'],
    ]);
    const settled = outcomes.map((rows) => rows[1] as AuditRecord);
    // The worker acts for the app, in no request of its own: each outcome names the request that
    // placed its batch, as the acceptance row does.
    expect(settled.every((e) => e.appId === appId && e.operator === null)).toBe(true);
    expect(outcomes.map((rows) => rows[1]?.requestId)).toEqual(outcomes.map((rows) => rows[0]?.requestId));
    expect(settled.every((e) => typeof e.requestId === 'string')).toBe(true);
    expect(settled.every((e) => e.enterpriseId === world.enterpriseGlobalId)).toBe(true);
    expect(outcomes[0]?.[0]?.detail).toMatchObject({ syncMode: 'async', status: 'pending' });
    expect(settled[2]?.detail.reason).toMatch(/no such asset/);
    expect(settled[1]?.detail.reason).toMatch(/not applied/);
    expect(await actionsOf(h, lock)).toEqual(['lending.lent']);
  });

  it('records the lendings that disabling a lock or revoking an asset or product ends', async () => {
    const { lock: byLock } = await lentAsset(world);
    expect(await setLocked(world, [byLock], true)).toEqual([1]);
    const byLockRows = await history(h, byLock);
    expect(byLockRows.map((e) => [e.action, e.operator])).toEqual([
      ['lending.lent', expect.any(String)],
      ['asset.lock', 'ops@example.com'],
      ['lending.ended', 'ops@example.com'],
    ]);
    expect(byLockRows[1]?.enterpriseId).toBe(world.enterpriseGlobalId);
    expect(byLockRows[2]?.detail).toMatchObject({ reason: 'lock_disabled' });

    const { asset: revokedAsset, lock: byAsset } = await lentAsset(world);
    await revoke(world, 'delete_asset', [{ assetNos: [revokedAsset] }]);
    const [assetEnded] = (await history(h, byAsset)).slice(-1);
    expect(assetEnded).toMatchObject({
      action: 'lending.ended',
      appId,
      enterpriseId: world.enterpriseGlobalId,
      detail: { reason: 'asset_revoked', licenseOrderId: expect.any(String) },
    });
    expect(await actionsOf(h, assetEnded?.detail.licenseOrderId as string)).toEqual(['order.accepted']);

    const only = productSpec();
    const { asset: revokedProduct, lock: byProduct } = await lentAsset(world, [only]);
    await revoke(world, 'delete_product', [{ assetNos: [revokedProduct], products: [only] }]);
    const [productEnded] = (await history(h, byProduct)).slice(-1);
    expect(productEnded).toMatchObject({ action: 'lending.ended', detail: { reason: 'product_revoked' } });
  });

  it('is written in the transaction of the change: an audit row that cannot be written undoes the change', async () => {
    const body = batch(world, [newBuy({ channelCustomerId: world.channelCustomerId })]);
    const channelOrderId = body.channelOrderId as string;
    const refuse = sql.raw(`kw_refuse_${channelOrderId}`);
    await sql`create function ${refuse}() returns trigger language plpgsql as $$
      begin raise exception 'audit refused'; end $$`.execute(h.database.db);
    await sql`create trigger ${refuse} before insert on audit_log for each row
      when (new.detail->>'channelOrderId' = ${sql.lit(channelOrderId)}) execute function ${refuse}()`.execute(
      h.database.db,
    );
    try {
      expectFailure(await postBatch(h, world, body), '500');
    } finally {
      await sql`drop trigger ${refuse} on audit_log`.execute(h.database.db);
      await sql`drop function ${refuse}()`.execute(h.database.db);
    }
    const stored = await h.database.db
      .selectFrom('order_batches')
      .select('id')
      .where('channel_order_id', '=', channelOrderId)
      .execute();
    expect(stored).toEqual([]);
    // Once the log takes rows again, the same batch is accepted afresh.
    const [order] = await submit(h, world, body);
    expect(await actionsOf(h, order?.licenseOrderId as string)).toEqual(['order.accepted']);
  });
});
