import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded, type DatabaseHandle } from '../../src/db/client.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';
import { AssetNumbersRepository } from '../../src/domain/asset-numbers/asset-numbers.repository.js';

// Migration 0090 gives every run of the issue log its numbers as a multirange; runs issued before
// it must still prove which app they were issued to, or their apps could not use them in orders.
let database: DatabaseHandle;

beforeAll(async () => {
  database = await openEmbedded({});
  await migrateTo(database.db, '0083_issued_number_runs');
});
afterAll(async () => database.close());

describe('migration 0090: issued numbers as ranges', () => {
  it('keeps runs issued before it usable by their own app only', async () => {
    const { db } = database;
    await sql`
      insert into issued_asset_number_runs (app_id, asset_nums) values
        ('app-a', array['8000000001', '8000000002', '8000000003']),
        ('app-b', array['8000000004', '8000000006'])`.execute(db);
    await migrateToLatest(db);
    const runs = await sql<{ app_id: string; num_ranges: string }>`
      select app_id, num_ranges::text as num_ranges from issued_asset_number_runs order by id`.execute(db);
    expect(runs.rows).toEqual([
      { app_id: 'app-a', num_ranges: '{[8000000001,8000000004)}' },
      { app_id: 'app-b', num_ranges: '{[8000000004,8000000005),[8000000006,8000000007)}' },
    ]);
    const numbers = new AssetNumbersRepository(db);
    const all = ['8000000001', '8000000003', '8000000004', '8000000005', '8000000006'];
    expect([...(await numbers.notIssuedTo('app-a', all))].sort()).toEqual([
      '8000000004',
      '8000000005',
      '8000000006',
    ]);
    expect([...(await numbers.notIssuedTo('app-b', all))].sort()).toEqual([
      '8000000001',
      '8000000003',
      '8000000005',
    ]);
  });
});
