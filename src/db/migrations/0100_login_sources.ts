import { sql, type Kysely } from 'kysely';

// Locking an account after five failures let anyone with `auth_me` keep another enterprise's
// administrator locked out. The lock now belongs to a source, the account tried from one remote
// address through one app (`login_source_attempts`); `login_attempts` keeps counting the account
// from anywhere, but only to slow it down a little, never to lock it. Locks of the old rule end
// here: they may have been an attacker's, and the counts they came with stay.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table login_source_attempts (
      account text not null,
      address text not null,
      app_id text not null,
      failures integer not null,
      locked_until timestamptz,
      updated_at timestamptz not null default now(),
      primary key (account, address, app_id)
    );
    update login_attempts set locked_until = null where locked_until is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table login_source_attempts`.execute(db);
}
