import { sql, type Kysely } from 'kysely';

// The request that placed an async batch, kept with it: the worker applies the batch later, in no
// request of its own, and the audit rows and webhook events of that completion (order.completed,
// order.failed) name the request that caused them. Batches placed before this column have none.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table order_batches add column request_id text`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table order_batches drop column request_id`.execute(db);
}
