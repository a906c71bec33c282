import { sql, type Kysely } from 'kysely';

// A relay's report says, per hour, how many seats past its grant an overage allowance let through
// (docs/relay.md); the vendor keeps the most of any hour of each report, for the Relays pages.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table relay_reports add column overage_peak integer not null default 0`.execute(db);
}
