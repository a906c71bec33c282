import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { startOrderWorker, type OrderWorker } from '../../src/jobs/order-worker.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  assetNum,
  assetRow,
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  postBatch,
  product,
  productsOn,
  submit,
  type OrderResult,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

type Status = { status: 'pending' | 'completed' | 'failed'; reason: string | null };

async function statusOf(harness: Harness['app'], t: OrderTenant, licenseOrderId: string): Promise<Status> {
  const response = await harness.inject({
    method: 'GET',
    url: `/order/api/order/v1/licenseOrder/${licenseOrderId}?g_nonce=${uniqueCode('n')}`,
    headers: { authorization: `Bearer ${t.token}` },
  });
  return (response.json() as { data: Status }).data;
}

/** Polls until the order leaves `pending`; the worker runs on its own schedule. */
async function settled(harness: Harness['app'], t: OrderTenant, licenseOrderId: string): Promise<Status> {
  for (let i = 0; i < 400; i++) {
    const status = await statusOf(harness, t, licenseOrderId);
    if (status.status !== 'pending') return status;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`order ${licenseOrderId} is still pending`);
}

async function withWorker<T>(run: () => Promise<T>, app: Harness['app'] = h.app): Promise<T> {
  const worker: OrderWorker = startOrderWorker(app.services.orders, app.log, { pollMs: 20 });
  try {
    return await run();
  } finally {
    await worker.stop();
  }
}

const asyncBatch = (orders: unknown[]) => batch(tenant, orders, { syncMode: 'async' });

describe('order op 5: syncMode async', () => {
  it('names the request that placed the batch in its completion’s audit row and event', async () => {
    const body = asyncBatch([newBuy({ assets: [{ assetNos: [assetNum()], products: [product()] }] })]);
    const [order] = await submit(h, tenant, body);
    const licenseOrderId = order?.licenseOrderId as string;
    await withWorker(() => settled(h.app, tenant, licenseOrderId));
    const rows = await h.database.db
      .selectFrom('audit_log')
      .select(['action', 'request_id'])
      .where('subject', '=', licenseOrderId)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.action)).toEqual(['order.accepted', 'order.completed']);
    const placedBy = rows[0]?.request_id;
    expect(placedBy).toEqual(expect.any(String));
    expect(rows[1]?.request_id).toBe(placedBy);
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select(['type', 'request_id'])
      .where(sql<boolean>`data->>'licenseOrderId' = ${licenseOrderId}`)
      .orderBy('type')
      .execute();
    expect(events).toEqual([
      { type: 'order.accepted', request_id: placedBy },
      { type: 'order.completed', request_id: placedBy },
    ]);
  });

  it('stores the batch and answers at once; the worker applies it', async () => {
    const num = assetNum();
    const body = asyncBatch([newBuy({ sequence: 9, assets: [{ assetNos: [num], products: [product()] }] })]);
    const [order] = await submit(h, tenant, body);
    expect(order).toMatchObject({
      sequence: 9,
      licenseOrderId: expect.any(String),
      customerId: expect.any(String),
    });
    // The retry of an async batch is answered from the record as well.
    expect(await submit(h, tenant, body)).toEqual([order]);

    const stored = await h.database.db
      .selectFrom('order_batches')
      .select(['payload', 'pending'])
      .where('channel_order_id', '=', body.channelOrderId as string)
      .executeTakeFirstOrThrow();
    expect(stored.pending).toBe(true);
    expect(stored.payload).toMatchObject({ syncMode: 'async', orders: [{ sequence: 9 }] });

    const status = await statusOf(h.app, tenant, order?.licenseOrderId as string);
    if (status.status === 'pending') expect(await assetRow(h, num)).toBeUndefined();

    const done = await withWorker(() => settled(h.app, tenant, order?.licenseOrderId as string));
    expect(done).toMatchObject({ status: 'completed', reason: null });
    expect(await assetRow(h, num)).toMatchObject({ customer_id: order?.customerId });
    expect(await productsOn(h, num)).toHaveLength(1);
  });

  it('carries limitAmount in the stored batch to the product it applies; one not given stays absent', async () => {
    const num = assetNum();
    const body = asyncBatch([
      newBuy({
        assets: [
          {
            assetNos: [num],
            products: [
              product({ crmProductId: 'AMT', limitAmount: 40 }),
              product({ crmProductId: 'NONE', limitAmount: null }),
            ],
          },
        ],
      }),
    ]);
    const [order] = await submit(h, tenant, body);
    const stored = await h.database.db
      .selectFrom('order_batches')
      .select('payload')
      .where('channel_order_id', '=', body.channelOrderId as string)
      .executeTakeFirstOrThrow();
    const [metered, plain] =
      (stored.payload as { orders: Array<{ assets: Array<{ products: Array<Record<string, unknown>> }> }> })
        .orders[0]?.assets[0]?.products ?? [];
    expect(metered).toMatchObject({ limitAmount: 40 });
    // Absent rather than null: a batch that leaves it out is stored, and hashed, as before the field.
    expect(plain).not.toHaveProperty('limitAmount');

    const done = await withWorker(() => settled(h.app, tenant, order?.licenseOrderId as string));
    expect(done).toMatchObject({ status: 'completed', reason: null });
    const rows = await productsOn(h, num);
    expect(rows.map((p) => [p.crm_product_id, p.limit_amount]).sort()).toEqual([
      ['AMT', 40],
      ['NONE', null],
    ]);
  });

  it('keeps text holding a lone UTF-16 surrogate as a text column would, U+FFFD, and applies it', async () => {
    const num = assetNum();
    const body = asyncBatch([
      newBuy({ customerName: 'Acme\ud800', assets: [{ assetNos: [num], products: [product()] }] }),
    ]);
    const [order] = await submit(h, tenant, body);
    const stored = await h.database.db
      .selectFrom('order_batches')
      .select('payload')
      .where('channel_order_id', '=', body.channelOrderId as string)
      .executeTakeFirstOrThrow();
    expect(stored.payload).toMatchObject({ orders: [{ customerName: 'Acme\ufffd' }] });
    const done = await withWorker(() => settled(h.app, tenant, order?.licenseOrderId as string));
    expect(done).toMatchObject({ status: 'completed', reason: null });
    expect(await assetRow(h, num)).toMatchObject({ customer_id: order?.customerId });
  });

  it('fails the whole batch when one order is refused, applying nothing', async () => {
    const taken = assetNum();
    await submit(
      h,
      tenant,
      batch(tenant, [newBuy({ assets: [{ assetNos: [taken], products: [product()] }] })]),
    );
    const fresh = assetNum();
    const [good, bad] = await submit(
      h,
      tenant,
      asyncBatch([
        newBuy({ sequence: 1, assets: [{ assetNos: [fresh], products: [product()] }] }),
        newBuy({ sequence: 2, assets: [{ assetNos: [taken], products: [product()] }] }),
      ]),
    );
    const [goodStatus, badStatus] = await withWorker(async () => [
      await settled(h.app, tenant, good?.licenseOrderId as string),
      await settled(h.app, tenant, bad?.licenseOrderId as string),
    ]);
    expect(badStatus).toMatchObject({
      status: 'failed',
      reason: 'orderList[sequence=2].assets[0].assetNos[0]: belongs to another customer',
    });
    expect(goodStatus).toMatchObject({
      status: 'failed',
      reason: 'not applied: the order with sequence 2 of this batch failed',
    });
    expect(await assetRow(h, fresh)).toBeUndefined();
  });

  it('refuses at once what can be checked without the worker', async () => {
    expectFailure(
      await postBatch(
        h,
        tenant,
        asyncBatch([newBuy({ assets: [{ assetNos: [assetNum()], products: [] }] })]),
      ),
      '13004',
      'orderList[sequence=1].assets[0].products: must not be empty unless orderType is delete_asset',
    );
    expectFailure(
      await postBatch(
        h,
        tenant,
        asyncBatch([
          {
            sequence: 1,
            channelCustomerId: uniqueCode('x'),
            licenseType: 'softkey',
            orderType: 'delete_asset',
            assets: [{ assetNos: ['K1'] }],
          },
        ]),
      ),
      '13004',
      'orderList[sequence=1].customerId: no customer matches customerId, channelCustomerId or crmCustomerId',
    );
  });

  it('applies each batch exactly once with two workers', async () => {
    const nums = Array.from({ length: 6 }, () => assetNum());
    const results: OrderResult[] = [];
    for (const num of nums) {
      results.push(
        ...(await submit(
          h,
          tenant,
          asyncBatch([newBuy({ assets: [{ assetNos: [num], products: [product()] }] })]),
        )),
      );
    }
    const second = startOrderWorker(h.app.services.orders, h.app.log, { pollMs: 5 });
    try {
      await withWorker(async () => {
        for (const r of results)
          expect((await settled(h.app, tenant, r.licenseOrderId)).status).toBe('completed');
      });
    } finally {
      await second.stop();
    }
    for (const num of nums) expect(await productsOn(h, num)).toHaveLength(1);
  });

  it('completes after a restart what was pending when the server stopped', async () => {
    const restarted = await startHarness();
    let app2: Harness['app'] | undefined;
    try {
      const t = await orderTenant(restarted);
      const num = assetNum();
      const [order] = await submit(
        restarted,
        t,
        batch(t, [newBuy({ assets: [{ assetNos: [num], products: [product()] }] })], { syncMode: 'async' }),
      );
      // The first server stops with the batch pending and no worker ever ran.
      await restarted.app.close();
      app2 = await buildApp({ config: restarted.config, db: restarted.database.db, adminKey: ADMIN_KEY });
      await app2.ready();
      const second = app2;
      const done = await withWorker(() => settled(second, t, order?.licenseOrderId as string), second);
      expect(done.status).toBe('completed');
      expect(await assetRow(restarted, num)).toMatchObject({ customer_id: order?.customerId });
    } finally {
      await app2?.close();
      await restarted.database.close();
    }
  });

  it('is visible through the status lookup to its own app only', async () => {
    const [order] = await submit(h, tenant, asyncBatch([newBuy()]));
    const other = await orderTenant(h);
    expectFailure(await orderCall(h, other, 'GET', `/licenseOrder/${order?.licenseOrderId}`), '13004');
  });
});
