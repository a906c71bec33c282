import { sql, type Kysely } from 'kysely';

// Two per-app settings, both off for every existing app:
// - offline_early_return: a checked-in offline lease frees its seat at once. Only for vendors whose
//   software deletes its lease when it checks in: the server cannot see that it did.
// - restrict_to_channels: the app's member logins (and its user tokens) are limited to the
//   enterprises that have a customer in one of its channels. Off, a member-center app serves every
//   enterprise (DOMAIN.md §2).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table apps
      add column offline_early_return boolean not null default false,
      add column restrict_to_channels boolean not null default false
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table apps drop column offline_early_return, drop column restrict_to_channels`.execute(db);
}
