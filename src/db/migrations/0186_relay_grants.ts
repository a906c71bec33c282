import { sql, type Kysely } from 'kysely';

// Pool grants answered to relays (docs/relay.md): one row per grant, with the signed grant itself
// (public: it holds no secret, and the same request asked again is answered with it) and the
// request's hash, unique, so a request is answered once however often or concurrently it is sent.
// The seats a grant holds are seat slots (migration 0181) named by `grant:<id>`, held until its end.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table relay_grants (
      id text primary key,
      request_hash text not null unique,
      relay_id text not null,
      relay_kid text not null,
      fingerprint text not null,
      licenses jsonb not null,
      token text not null,
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      created_at timestamptz not null
    );
    create index relay_grants_relay_idx on relay_grants (relay_id, created_at desc);
  `.execute(db);
}
