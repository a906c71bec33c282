import { sql, type Kysely } from 'kysely';

// Offline activation (docs/activation.md): a machine with no network sends a request by file or
// typed code, and whoever can reach Keyward turns it into a lease. One row per request answered,
// unique per app and nonce, so a request answered once is refused the second time (a replay)
// rather than answered again; the lease itself is a runtime lease like any other (a second request
// from the same machine resumes the same lease, so several rows may name one lease). An early return
// (the machine's return code, where its app allows one) is written here too.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table runtime_activations (
      id bigint generated always as identity primary key,
      app_id text not null references apps (id),
      nonce text not null,
      lease_id text not null references runtime_leases (id),
      enterprise_id bigint references enterprises (id),
      asset_num text not null,
      crm_product_id text not null,
      days integer not null,
      fingerprint_hash text not null,
      via text not null check (via in ('console', 'operator', 'admin', 'runtime')),
      created_at timestamptz not null default now(),
      returned_at timestamptz
    );
    create unique index runtime_activations_nonce_uq on runtime_activations (app_id, nonce);
    create index runtime_activations_lease_idx on runtime_activations (lease_id);
    create index runtime_activations_enterprise_idx on runtime_activations (enterprise_id, created_at desc);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table runtime_activations`.execute(db);
}
