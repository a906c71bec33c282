import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded, type DatabaseHandle } from '../../src/db/client.js';
import { migrateTo } from '../../src/db/migrate.js';

// Migration 0100 moves login locks to the source that earned them; an account lock of the old rule
// may be an attacker's, so it ends, and the account's count stays for the gentler backoff.
let database: DatabaseHandle;

beforeAll(async () => {
  database = await openEmbedded({});
  await migrateTo(database.db, '0083_issued_number_runs');
});
afterAll(async () => database.close());

describe('migration 0100: login locks per source', () => {
  it('ends the account locks of the old rule and keeps their counts', async () => {
    const { db } = database;
    await sql`
      insert into login_attempts (account, failures, locked_until, updated_at) values
        ('admin@abc123', 5, now() + interval '15 minutes', now()),
        ('alice@abc123', 1, null, now())`.execute(db);
    await migrateTo(db, '0100_login_sources');
    const rows = await sql<{ account: string; failures: number; locked_until: Date | null }>`
      select account, failures, locked_until from login_attempts order by account`.execute(db);
    expect(rows.rows).toEqual([
      { account: 'admin@abc123', failures: 5, locked_until: null },
      { account: 'alice@abc123', failures: 1, locked_until: null },
    ]);
    const sources = await sql<{ n: number }>`select count(*)::int as n from login_source_attempts`.execute(
      db,
    );
    expect(sources.rows[0]?.n).toBe(0);
  });
});
