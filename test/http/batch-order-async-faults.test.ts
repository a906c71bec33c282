import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../support/harness.js';
import { assetNum, batch, newBuy, orderTenant, product, submit, type OrderTenant } from './order-helpers.js';

// A batch whose application faults (here: a stored payload the worker cannot read) is retried with
// backoff and failed after a bounded number of attempts; it never holds up the batches behind it.
let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

const asyncOrder = () =>
  batch(tenant, [newBuy({ sequence: 1, assets: [{ assetNos: [assetNum()], products: [product()] }] })], {
    syncMode: 'async',
  });

async function batchRow(channelOrderId: string) {
  return h.database.db
    .selectFrom('order_batches')
    .select(['id', 'pending', 'attempts', 'next_attempt_at'])
    .where('channel_order_id', '=', channelOrderId)
    .executeTakeFirstOrThrow();
}

async function orderStatus(licenseOrderId: string) {
  return h.database.db
    .selectFrom('license_orders')
    .select(['status', 'reason'])
    .where('id', '=', licenseOrderId)
    .executeTakeFirstOrThrow();
}

/** Runs the worker's step until `done` holds; faults are expected along the way. */
async function workUntil(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100 && !(await done()); i += 1) {
    await h.app.services.orders.processNextBatch().catch(() => undefined);
  }
  expect(await done()).toBe(true);
}

describe('async batches that fault', () => {
  it('back off, let later batches through, and fail after the last attempt', async () => {
    const poisoned = asyncOrder();
    const [poisonedOrder] = await submit(h, tenant, poisoned);
    const poisonedBatch = await batchRow(poisoned.channelOrderId as string);
    await h.database.db
      .updateTable('order_batches')
      .set({ payload: JSON.stringify({ unreadable: true }) })
      .where('id', '=', poisonedBatch.id)
      .execute();
    const healthy = asyncOrder();
    const [healthyOrder] = await submit(h, tenant, healthy);

    await workUntil(
      async () => (await orderStatus(healthyOrder?.licenseOrderId ?? '')).status === 'completed',
    );
    const deferred = await batchRow(poisoned.channelOrderId as string);
    expect(deferred.pending).toBe(true);
    expect(deferred.attempts).toBeGreaterThanOrEqual(1);
    expect(deferred.next_attempt_at?.getTime()).toBeGreaterThan(Date.now());
    expect((await orderStatus(poisonedOrder?.licenseOrderId ?? '')).status).toBe('pending');

    // Its last attempt comes due.
    await h.database.db
      .updateTable('order_batches')
      .set({ attempts: 7, next_attempt_at: new Date(Date.now() - 1000) })
      .where('id', '=', poisonedBatch.id)
      .execute();
    await workUntil(async () => !(await batchRow(poisoned.channelOrderId as string)).pending);
    expect(await orderStatus(poisonedOrder?.licenseOrderId ?? '')).toEqual({
      status: 'failed',
      reason: 'not applied: an internal error persisted over 8 attempts',
    });
  });
});
