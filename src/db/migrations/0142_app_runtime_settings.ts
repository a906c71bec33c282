import { sql, type Kysely } from 'kysely';

// How long the license runtime may let an app's programs run offline: the operator sets it per
// app. 0, every existing app's value, allows no offline lease at all; a year is the most, so a
// lease handed out cannot outlive a revocation by longer than that.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table apps add column offline_lease_max_days integer not null default 0
              check (offline_lease_max_days between 0 and 365)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table apps drop column offline_lease_max_days`.execute(db);
}
