import { sql, type Kysely } from 'kysely';

// An async batch keeps, beside the normalized payload the worker applies (`orders`, `extends`,
// nulls filled in), the body as the app sent it (`orderList`, `assetExtendList`): the operator's
// Orders page shows what was received, which is what the app's developer asks about. Rows from
// before this migration have none; the page shows their stored payload and says so.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table order_batches add column received jsonb`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table order_batches drop column received`.execute(db);
}
