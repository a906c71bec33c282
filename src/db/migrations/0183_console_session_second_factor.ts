import { sql, type Kysely } from 'kysely';

// A session remembers which second factor made it whole (an authenticator code or a recovery
// code), so the account page can say how the operator signed in rather than "password" alone.
// Null: none was given (the admin key, single sign-on, a password with no second factor enrolled).
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table console_sessions add column second_factor text
      check (second_factor in ('totp', 'recovery'));
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table console_sessions drop column second_factor`.execute(db);
}
