import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appToken, createTestApp } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { seedCustomer } from './enterprise-helpers.js';
import {
  assetNum,
  assetRow,
  batch,
  expectFailure,
  newBuy,
  orderTenant,
  postBatch,
  submit,
  type OrderTenant,
} from './order-helpers.js';

// Order op 5 without channelCode: the channel is the one of the customers the orders name.
let h: Harness;
let tenant: OrderTenant;
let twoChannels: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
  const app = await createTestApp(h, {
    scopes: ['auth_order'],
    channels: [uniqueCode('CH'), uniqueCode('CH')],
  });
  twoChannels = { app, channel: app.channels[0] as string, token: await appToken(h, app) };
});
afterAll(async () => h.close());

const customerIn = async (channelCode: string) =>
  (await seedCustomer(h, { channelCode, channelCustomerId: uniqueCode('cc') })).id;

/** A body without channelCode. */
function withoutChannel(t: OrderTenant, orderList: unknown[], overrides: Record<string, unknown> = {}) {
  const body = batch(t, orderList, overrides);
  delete body.channelCode;
  return body;
}

const batchRow = (channelOrderId: unknown) =>
  h.database.db
    .selectFrom('order_batches')
    .select(['channel_code'])
    .where('channel_order_id', '=', channelOrderId as string)
    .execute();

const ordersOf = (channelOrderId: unknown) =>
  h.database.db
    .selectFrom('license_orders')
    .select(['channel_code', 'customer_id'])
    .where('channel_order_id', '=', channelOrderId as string)
    .execute();

describe('order op 5 without channelCode', () => {
  it('takes the channel of the customer the orders name and records the orders in it', async () => {
    // The app's second channel, so the derived channel is not merely the app's first.
    const channel = twoChannels.app.channels[1] as string;
    const customerId = await customerIn(channel);
    const first = withoutChannel(twoChannels, [newBuy({ customerId, channelCustomerId: null })]);
    expect(first).not.toHaveProperty('channelCode');
    const [result] = await submit(h, twoChannels, first);
    expect(result?.customerId).toBe(customerId);
    expect(await batchRow(first.channelOrderId)).toEqual([{ channel_code: channel }]);
    expect(await ordersOf(first.channelOrderId)).toEqual([
      { channel_code: channel, customer_id: customerId },
    ]);
  });

  it('answers a retry with or without the derived channelCode from the stored result', async () => {
    const customerId = await customerIn(tenant.channel);
    const body = withoutChannel(tenant, [newBuy({ customerId, channelCustomerId: null })]);
    const first = await submit(h, tenant, body);
    expect(await submit(h, tenant, body)).toEqual(first);
    expect(await submit(h, tenant, { ...body, channelCode: tenant.channel })).toEqual(first);
    expect(await ordersOf(body.channelOrderId)).toHaveLength(1);
  });

  it("refuses a customer of another application's channel with 60000 and changes nothing", async () => {
    const other = await orderTenant(h);
    const theirs = await customerIn(other.channel);
    const num = assetNum();
    const refused = async (customerId: string) => {
      const body = withoutChannel(tenant, [
        newBuy({
          sequence: 3,
          customerId,
          channelCustomerId: null,
          assets: [{ assetNos: [num], products: [{ productUri: 'p' }] }],
        }),
      ]);
      const response = await postBatch(h, tenant, body);
      expectFailure(response, '60000', 'application token check failed');
      expect(await batchRow(body.channelOrderId)).toEqual([]);
      return (response.json() as { cause: string }).cause;
    };
    const cause = await refused(theirs);
    expect(cause).toBe(
      "channelCode is not given and orderList[sequence=3].customerId names no customer of this application's channels",
    );
    // An unknown customerId hears the same, so the refusal tells nothing of other channels.
    expect(await refused(uniqueCode('nobody'))).toBe(cause);
    // A customer of no channel at all (made by op 2) is no channel to take either.
    expect(await refused(await customerIn(null as unknown as string))).toBe(cause);
    expect(await assetRow(h, num)).toBeUndefined();
  });

  it('refuses a batch whose one order of several names a customer of another channel', async () => {
    const other = await orderTenant(h);
    const mine = await customerIn(tenant.channel);
    const theirs = await customerIn(other.channel);
    const body = withoutChannel(tenant, [
      newBuy({ sequence: 1, customerId: mine, channelCustomerId: null }),
      newBuy({ sequence: 2, customerId: theirs, channelCustomerId: null }),
    ]);
    expectFailure(await postBatch(h, tenant, body), '60000');
    expect(await batchRow(body.channelOrderId)).toEqual([]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['no customerId', { channelCustomerId: uniqueCode('cc') }],
    ['a blank customerId', { customerId: '  ', channelCustomerId: uniqueCode('cc') }],
    ['a null customerId', { customerId: null }],
  ])('refuses an order with %s with 13004 naming channelCode', async (_name, order) => {
    const mine = await customerIn(tenant.channel);
    const body = withoutChannel(tenant, [
      newBuy({ sequence: 1, customerId: mine, channelCustomerId: null }),
      newBuy({ sequence: 2, ...order }),
    ]);
    expectFailure(await postBatch(h, tenant, body), '13004', 'channelCode: is required');
    expect(await batchRow(body.channelOrderId)).toEqual([]);
  });

  it("refuses customers of different channels, even both the app's, with 13004 naming channelCode", async () => {
    const [a, b] = twoChannels.app.channels as [string, string];
    const body = withoutChannel(twoChannels, [
      newBuy({ sequence: 1, customerId: await customerIn(a), channelCustomerId: null }),
      newBuy({ sequence: 2, customerId: await customerIn(b), channelCustomerId: null }),
    ]);
    expectFailure(
      await postBatch(h, twoChannels, body),
      '13004',
      `channelCode: is required when the orders' customers are of different channels (${[a, b].sort().join(', ')})`,
    );
    expect(await batchRow(body.channelOrderId)).toEqual([]);
  });

  it('still refuses a channelCode given that the app does not hold, whatever the customer', async () => {
    const customerId = await customerIn(tenant.channel);
    const body = batch(tenant, [newBuy({ customerId, channelCustomerId: null })], {
      channelCode: uniqueCode('CH'),
    });
    expectFailure(await postBatch(h, tenant, body), '60000');
  });
});
