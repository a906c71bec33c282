import { sql, type Kysely } from 'kysely';

// A pool grant may hold shares of a license's usage limits (docs/relay.md, "Usage limits"): the
// grant keeps which product instances it charged and how much, to give back what its relay's
// return says went unused; a report keeps what the relay had used of each share when it wrote it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table relay_grants add column shares jsonb`.execute(db);
  await sql`alter table relay_reports add column shares_used jsonb`.execute(db);
}
