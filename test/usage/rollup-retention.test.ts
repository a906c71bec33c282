import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RollupService } from '../../src/domain/usage/rollup.service.js';
import { startIsolatedHarness, type Harness } from '../support/harness.js';
import { checkOut, fingerprint, leaseOf, lockWith, runtimeWorld } from '../http/runtime-helpers.js';

// Storage that stays bounded: hourly rollups go after USAGE_HOURLY_RETENTION_DAYS while their days
// stay, except an hour a live lease spans (its end recounts it). On a database of its own: a
// prune reaches every row of the database, and other files keep hours of their own.

const DAY = 86_400_000;
let h: Harness;
beforeAll(async () => {
  h = await startIsolatedHarness();
});
afterAll(async () => h.close());

async function addRollup(table: 'usage_hourly' | 'usage_daily', productId: number, bucket: Date) {
  await sql`
    insert into ${sql.table(table)} (bucket, product_id, app_id, enterprise_id, product, asset_num,
                                     licensed_seats, peak_seats, seat_ms)
    values (${bucket}, ${productId}, 'app', 1, 'P', 'A', 5, 1, 3600000)
  `.execute(h.database.db);
}

async function bucketsOf(table: 'usage_hourly' | 'usage_daily', productId: number): Promise<number[]> {
  const { rows } = await sql<{ bucket: Date }>`
    select bucket from ${sql.table(table)} where product_id = ${productId} order by bucket
  `.execute(h.database.db);
  return rows.map((r) => r.bucket.getTime());
}

describe('usage rollup retention', () => {
  it('keeps hours for USAGE_HOURLY_RETENTION_DAYS and days for USAGE_RETENTION_DAYS', async () => {
    const now = Date.UTC(2026, 10, 27, 12);
    const old = new Date(now - 100 * DAY);
    const recent = new Date(now - 10 * DAY);
    const ancient = new Date(now - 800 * DAY);
    const productId = 9_000_000_001;
    await addRollup('usage_hourly', productId, old);
    await addRollup('usage_hourly', productId, recent);
    await addRollup('usage_daily', productId, old);
    await addRollup('usage_daily', productId, ancient);
    const rollups = new RollupService(
      h.database.db,
      { leaseRetentionDays: 90, hourlyRetentionDays: 90, rollupRetentionDays: 730 },
      { now: () => now },
    );
    await rollups.prune();
    expect(await bucketsOf('usage_hourly', productId)).toEqual([recent.getTime()]);
    expect(await bucketsOf('usage_daily', productId)).toEqual([old.getTime()]);
  });

  it('keeps an old hour that a live lease of the license spans', async () => {
    const world = await runtimeWorld(h);
    const target = await lockWith(world, { limitConcurrent: 2 });
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    const { product_id: productId } = await h.database.db
      .selectFrom('runtime_leases')
      .select('product_id')
      .where('id', '=', lease.leaseId)
      .executeTakeFirstOrThrow();
    const now = Date.now();
    const old = new Date(now - 100 * DAY);
    // A lease running since before that hour (an offline one lives for days).
    await h.database.db
      .updateTable('runtime_leases')
      .set({ created_at: new Date(now - 101 * DAY) })
      .where('id', '=', lease.leaseId)
      .execute();
    await addRollup('usage_hourly', Number(productId), old);
    await addRollup('usage_hourly', 9_000_000_002, old);
    await new RollupService(
      h.database.db,
      { leaseRetentionDays: 90, hourlyRetentionDays: 90, rollupRetentionDays: 730 },
      { now: () => now },
    ).prune();
    expect(await bucketsOf('usage_hourly', Number(productId))).toEqual([old.getTime()]);
    expect(await bucketsOf('usage_hourly', 9_000_000_002)).toEqual([]);
  });
});
