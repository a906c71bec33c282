import { sql, type Kysely } from 'kysely';

// Applications, their tokens, replay protection, rate limits and the audit trail: everything the
// guards of both surfaces need before any business table exists.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table apps (
      id text primary key,
      app_key text not null unique,
      secret_hash text not null,
      name text not null,
      scopes text[] not null,
      channels text[] not null default '{}',
      status text not null check (status in ('pending', 'active', 'disabled')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table tokens (
      token_hash text primary key,
      app_id text not null references apps(id),
      member_id bigint,
      kind text not null check (kind in ('app', 'user')),
      scopes text[] not null,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      created_at timestamptz not null default now()
    );
    create index tokens_app_idx on tokens (app_id) where revoked_at is null;
    create index tokens_member_idx on tokens (member_id) where member_id is not null and revoked_at is null;
    create index tokens_expires_idx on tokens (expires_at);

    create table nonces (
      app_id text not null,
      nonce text not null,
      expires_at timestamptz not null,
      primary key (app_id, nonce)
    );
    create index nonces_expires_idx on nonces (expires_at);

    create table rate_counters (
      app_id text not null,
      window_start bigint not null,
      hits integer not null,
      primary key (app_id, window_start)
    );

    create table audit_log (
      id bigserial primary key,
      action text not null,
      app_id text,
      operator text,
      subject text,
      detail jsonb not null default '{}',
      request_id text,
      created_at timestamptz not null default now()
    );
    create index audit_log_subject_idx on audit_log (subject, id);

    create table login_attempts (
      account text primary key,
      failures integer not null default 0,
      locked_until timestamptz,
      updated_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table login_attempts, audit_log, rate_counters, nonces, tokens, apps`.execute(db);
}
