import { sql, type Kysely } from 'kysely';

// Operators' single sign-on (OpenID Connect, authorization code with PKCE). Between the redirect
// to the provider and the browser's return, the sign-in's state, nonce and PKCE verifier are kept
// here rather than in one process's memory, so any instance behind the proxy can finish it.
// A row is found by the hash of its state (the state travels in URLs and logs) and the hash of a
// short-lived cookie the browser was given with it: a state from another browser finds nothing.
// Each row is taken once (deleted as it is read) and lives ten minutes.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table sso_requests (
      state_hash text primary key,
      browser_hash text not null,
      nonce text not null,
      code_verifier text not null,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null
    );
    create index sso_requests_expires_idx on sso_requests (expires_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table sso_requests`.execute(db);
}
