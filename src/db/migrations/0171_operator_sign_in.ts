import { sql, type Kysely } from 'kysely';

// Operators sign in to the console by email and password, then a second factor. A session waiting
// for its second factor counts the wrong codes given to it, so a stolen password buys a handful of
// guesses at the six digits and then has to start over (and through the login lockout again).
// A session remembers how it was opened: single sign-on leaves the second factor to the provider.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table console_sessions add column second_factor_failures integer not null default 0;
    alter table console_sessions add column sign_in_method text not null default 'key'
      check (sign_in_method in ('key', 'password', 'sso'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table console_sessions drop column sign_in_method;
    alter table console_sessions drop column second_factor_failures;
  `.execute(db);
}
