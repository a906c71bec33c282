import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { withTimeLimit } from '../../src/db/client.js';
import { TransactionTimeLimitError } from '../../src/db/time-limit.js';
import { AppsService } from '../../src/domain/apps/apps.service.js';
import { OrdersService } from '../../src/domain/orders/orders.service.js';
import { appToken } from '../support/fixtures.js';
import { testDatabaseUrl } from '../support/database.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  assetNum,
  batch,
  expectFailure,
  newBuy,
  orderTenant,
  postBatch,
  product,
  submit,
  type OrderTenant,
} from './order-helpers.js';

// TRANSACTION_LIMIT_MS: a call that holds the database too long is rolled back whole and answers
// "500"; an async batch that does is a fault the worker retries. The limit is set to 1 ms here: a
// transaction writing thousands of rows outlasts it on any machine, while the lone statements of
// the token endpoint and the guards start well within it.
let limited: Harness;
let tenant: OrderTenant;
let normal: Harness;
let normalTenant: OrderTenant;

/**
 * The limited server's tenant, made through the handle's own db: the services' view holds the
 * 1 ms limit, and an app's creation (its row, then its audit row) takes more than one statement.
 */
async function unlimitedTenant(h: Harness): Promise<OrderTenant> {
  const channels = [uniqueCode('CH')];
  const created = await new AppsService(h.database.db).create({
    name: 'test app',
    scopes: ['auth_order'],
    channels,
    pending: false,
  });
  const app = { appKey: created.appKey, appSecret: created.appSecret, channels };
  return { app, channel: channels[0] as string, token: await appToken(h, app) };
}

beforeAll(async () => {
  limited = await startHarness({ TRANSACTION_LIMIT_MS: '1' });
  tenant = await unlimitedTenant(limited);
  normal = await startHarness();
  normalTenant = await orderTenant(normal);
});
afterAll(async () => {
  await limited?.close();
  await normal?.close();
});

/** A new_buy of 100 asset numbers with 18 extensions and a product each: 2,000 rows. */
function bigOrder(nums: string[]): Record<string, unknown> {
  const assetExtendList = Array.from({ length: 18 }, (_, i) => ({ extendCode: `x${i}`, extendValue: 'v' }));
  return newBuy({ assets: [{ assetNos: nums, assetExtendList, products: [product()] }] });
}

const hundredNums = () => Array.from({ length: 100 }, () => assetNum());

async function assetCount(h: Harness, nums: string[]): Promise<number> {
  const rows = await h.database.db.selectFrom('assets').select('id').where('asset_num', 'in', nums).execute();
  return rows.length;
}

describe('a call past the transaction time limit', () => {
  it('answers "500" and writes nothing, not even its idempotency record', async () => {
    const nums = hundredNums();
    const body = batch(tenant, [bigOrder(nums)]);
    expectFailure(await postBatch(limited, tenant, body), '500');
    expect(await assetCount(limited, nums)).toBe(0);
    const batches = await limited.database.db
      .selectFrom('order_batches')
      .select('id')
      .where('channel_order_id', '=', body.channelOrderId as string)
      .execute();
    expect(batches).toHaveLength(0);
  });

  it('is a fault for the async worker: nothing applied, the batch waits and applies later', async () => {
    const nums = hundredNums();
    const body = batch(normalTenant, [bigOrder(nums)], { syncMode: 'async' });
    const [accepted] = await submit(normal, normalTenant, body);
    const hurried = new OrdersService(
      withTimeLimit(normal.database.db, 1),
      normal.app.services.assetNumbers,
      {
        instanceRowsPerCall: 100_000,
      },
    );
    await expect(hurried.processNextBatch()).rejects.toBeInstanceOf(TransactionTimeLimitError);
    expect(await assetCount(normal, nums)).toBe(0);
    const waiting = await normal.database.db
      .selectFrom('license_orders')
      .select('status')
      .where('id', '=', accepted?.licenseOrderId ?? '')
      .executeTakeFirstOrThrow();
    expect(waiting.status).toBe('pending');

    // Past its back-off, the worker with the default limit applies it.
    await normal.database.db
      .updateTable('order_batches')
      .set({ next_attempt_at: null })
      .where('channel_order_id', '=', body.channelOrderId as string)
      .execute();
    while (await normal.app.services.orders.processNextBatch()) {
      // drain
    }
    expect(await assetCount(normal, nums)).toBe(100);
  });
});

describe('the largest call the default row limit accepts', () => {
  it(
    'is applied whole within the default transaction limit, on this database',
    { timeout: 120_000 },
    async () => {
      // The default of the database under test: PostgreSQL's where the suite runs on one.
      const defaults = loadConfig({ DATA_DIR: '/nonexistent', DATABASE_URL: testDatabaseUrl() ?? '' }).limits;
      const server = await startHarness({ INSTANCE_ROWS_LIMIT: String(defaults.instanceRowsPerCall) });
      try {
        const caller = await orderTenant(server);
        // The slowest shape measured: 19 products on every asset number, 20 rows a number.
        const numbers = Math.floor(defaults.instanceRowsPerCall / 20);
        const orders = [];
        for (let start = 0; start < numbers; start += 1000) {
          const nums = Array.from({ length: Math.min(1000, numbers - start) }, () => assetNum());
          orders.push(
            newBuy({
              sequence: orders.length + 1,
              assets: [{ assetNos: nums, products: Array.from({ length: 19 }, () => product()) }],
            }),
          );
        }
        const response = await postBatch(server, caller, batch(caller, orders));
        expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
        expect((response.json() as { code: unknown }).code).toBe(0);
      } finally {
        await server.close();
      }
    },
  );
});
