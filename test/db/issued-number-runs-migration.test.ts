import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded, type DatabaseHandle } from '../../src/db/client.js';
import { migrateTo, migrateToLatest } from '../../src/db/migrate.js';

// Migration 0083 turns the per-number issue log into one row per issue; numbers issued before it
// must all still be on record, each with the app and the time it was issued.
let database: DatabaseHandle;

beforeAll(async () => {
  database = await openEmbedded({});
  await migrateTo(database.db, '0082_issued_numbers_brin');
});
afterAll(async () => database.close());

describe('migration 0083: the issue log as one row per issue', () => {
  it('keeps every number issued before it, grouped by app and issue time', async () => {
    const { db } = database;
    await sql`
      insert into issued_asset_numbers (asset_num, app_id, created_at) values
        ('8000000002', 'app-a', '2026-01-01T00:00:00Z'),
        ('8000000001', 'app-a', '2026-01-01T00:00:00Z'),
        ('8000000003', 'app-b', '2026-01-01T00:00:00Z'),
        ('8000000004', 'app-a', '2026-02-01T00:00:00Z')`.execute(db);
    await migrateToLatest(db);
    const runs = await sql<{ app_id: string; asset_nums: string[]; created_at: Date }>`
      select app_id, asset_nums, created_at from issued_asset_number_runs order by created_at, app_id`.execute(
      db,
    );
    expect(runs.rows.map((r) => [r.app_id, r.asset_nums, r.created_at.toISOString()])).toEqual([
      ['app-a', ['8000000001', '8000000002'], '2026-01-01T00:00:00.000Z'],
      ['app-b', ['8000000003'], '2026-01-01T00:00:00.000Z'],
      ['app-a', ['8000000004'], '2026-02-01T00:00:00.000Z'],
    ]);
    const old = await sql<{
      t: string | null;
    }>`select to_regclass('issued_asset_numbers')::text as t`.execute(db);
    expect(old.rows[0]?.t).toBeNull();
  });
});
