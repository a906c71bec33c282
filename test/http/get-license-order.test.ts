import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  submit,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

describe('GET licenseOrder/{licenseOrderId}', () => {
  it('answers where an order stands', async () => {
    const body = batch(tenant, [newBuy({ sequence: 3 })]);
    const [order] = await submit(h, tenant, body);
    const response = await orderCall(h, tenant, 'GET', `/licenseOrder/${order?.licenseOrderId}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      code: 0,
      message: 'success',
      data: {
        licenseOrderId: order?.licenseOrderId,
        channelOrderId: body.channelOrderId,
        sequence: 3,
        status: 'completed',
        reason: null,
      },
    });
  });

  it('answers an unknown order with 13004', async () => {
    expectFailure(
      await orderCall(h, tenant, 'GET', '/licenseOrder/no-such-order'),
      '13004',
      'licenseOrderId: no such license order',
    );
  });

  it("answers another app's order exactly as an unknown one", async () => {
    const other = await orderTenant(h);
    const [theirs] = await submit(h, other, batch(other, [newBuy()]));
    expectFailure(
      await orderCall(h, tenant, 'GET', `/licenseOrder/${theirs?.licenseOrderId}`),
      '13004',
      'licenseOrderId: no such license order',
    );
  });
});

orderGuardSuite(() => h, {
  method: 'GET',
  path: () => `${ORDER_PREFIX}/licenseOrder/some-order`,
});
