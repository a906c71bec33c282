import { sql, type Kysely } from 'kysely';

// The operator's console lists order batches newest first, a page at a time, and counts the last
// hour's: without an index in time order each page would sort the whole table. The pending
// partial index (0020) holds only the queue, not the history.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index order_batches_created_idx on order_batches (created_at, id)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index order_batches_created_idx`.execute(db);
}
