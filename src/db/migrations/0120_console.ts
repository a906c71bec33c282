import { sql, type Kysely } from 'kysely';

// The web console (/console). Its sessions live in the database, so any instance serves any
// signed-in browser and a restart signs no one out. A row is found by the hash of the cookie's
// secret, never by the secret. An enterprise administrator's session rides on the user token its
// sign-in was issued: revoking that token (password change, member deleted, console client
// disabled) ends the session, and purging the token deletes the row.
//
// The console's own first-party client signs enterprise administrators in with the password grant
// rules of the API (lockout per account, address and app). It has no usable secret: '!' is no
// SHA-256 digest, so no client_secret authenticates as it; only the server's console uses it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table console_sessions (
      id_hash text primary key,
      kind text not null check (kind in ('operator', 'enterprise')),
      token_hash text references tokens (token_hash) on delete cascade,
      created_at timestamptz not null default now(),
      last_seen_at timestamptz not null default now(),
      expires_at timestamptz not null,
      check ((kind = 'enterprise') = (token_hash is not null))
    );
    create index console_sessions_expiry_idx on console_sessions (expires_at);
    create index console_sessions_token_idx on console_sessions (token_hash) where token_hash is not null;
  `.execute(db);
  await sql`
    insert into apps (id, app_key, secret_hash, name, scopes, channels, status)
    values (gen_random_uuid()::text, 'keyward-console', '!', 'Keyward console', array['auth_me'], array[]::text[], 'active')
    on conflict do nothing
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`delete from apps where app_key = 'keyward-console'`.execute(db);
  await sql`drop table console_sessions`.execute(db);
}
