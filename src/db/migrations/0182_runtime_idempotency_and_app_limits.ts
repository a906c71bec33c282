import { sql, type Kysely } from 'kysely';

// A consume a client may retry (its answer lost to a timeout) is applied once: the call's
// Idempotency-Key is stored with its effect, per app, and a repeat within the window answers the
// first result (docs/runtime.md). The key is claimed before the effect in the same transaction, so
// a concurrent duplicate waits for the first to commit and then reads its answer.
//
// An app's rate limit may be set per app (`keyward app set --rate-limit`); null keeps the server's
// RATE_LIMIT_PER_MINUTE.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table runtime_consumptions (
      app_id text not null references apps (id),
      idempotency_key text not null,
      lease_id text not null,
      amount bigint not null,
      consumed bigint,
      amount_limit bigint,
      created_at timestamptz not null,
      primary key (app_id, idempotency_key)
    );
    create index runtime_consumptions_created_idx on runtime_consumptions (created_at);

    alter table apps add column rate_limit_per_minute integer check (rate_limit_per_minute > 0);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table runtime_consumptions;
    alter table apps drop column rate_limit_per_minute;
  `.execute(db);
}
