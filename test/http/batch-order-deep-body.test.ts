import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nonce, startHarness, type Harness } from '../support/harness.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { batch, newBuy, orderTenant, type OrderTenant } from './order-helpers.js';

// An async batch's body is copied as received, for the Orders page. A hostile body nested deeper
// than a copy can follow (found by the fuzzer: a 500) is refused as bad input, and nothing is kept.
let h: Harness;
let tenant: OrderTenant;
beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

describe('an async batch nested past any field', () => {
  it('is refused with the envelope, not a 500, and no batch is kept', async () => {
    const depth = 20_000;
    const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const order = JSON.stringify(newBuy({ sequence: 1 })).replace(/^\{/, `{"branchName":${deep},`);
    const body = JSON.stringify(batch(tenant, [], { syncMode: 'async' })).replace(
      '"orderList":[]',
      `"orderList":[${order}]`,
    );
    const before = await h.database.db
      .selectFrom('order_batches')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const reply = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/licenseOrder/batchOrder?g_nonce=${nonce()}&appKey=${tenant.app.appKey}`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      payload: body,
    });
    const answer = reply.json<{ code: string }>();
    expect(answer.code, reply.body.slice(0, 200)).not.toBe('500');
    expect(reply.statusCode).toBeLessThan(500);
    const after = await h.database.db
      .selectFrom('order_batches')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});
