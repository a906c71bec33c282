import { sql, type Kysely } from 'kysely';

// Every public key the license runtime has signed offline leases with. Private keys stay in
// DATA_DIR (or RUNTIME_SIGNING_KEY); the public halves live here so that every instance sharing
// the database publishes the same JWKS, and a lease signed before a rotation still verifies. A
// retired key signs nothing new but stays published while leases it signed may still run.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table runtime_signing_keys (
      kid text primary key,
      public_jwk jsonb not null,
      created_at timestamptz not null default now(),
      retired_at timestamptz
    )
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table runtime_signing_keys`.execute(db);
}
