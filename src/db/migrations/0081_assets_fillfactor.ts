import { sql, type Kysely } from 'kysely';

// Order ops 6–7 switch `locked` on up to 1,000 assets a call. Neither it nor `updated_at` is
// indexed, so with room left on the page PostgreSQL updates the row in place (a HOT update)
// instead of writing a new version elsewhere and an entry in each of the table's three indexes.
// Pages filled from now on keep a fifth free; pages already full get the room as they are rewritten.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table assets set (fillfactor = 80)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table assets reset (fillfactor)`.execute(db);
}
