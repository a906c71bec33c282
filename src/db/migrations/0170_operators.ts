import { sql, type Kysely } from 'kysely';

// Named operators with roles (issue: everyone shared one admin key). An operator signs in to the
// console with email and password (hashed as members' are), a second factor (TOTP) when enrolled,
// or single sign-on; automation uses personal API tokens, stored hashed, scoped to a role no wider
// than the operator's. The admin key stays for the first start and emergencies.
//
// Console sessions and audit rows now name the operator: console_sessions.operator_id (null for a
// session opened with the admin key) and audit_log.operator_id beside the operator's name in
// `operator`. Platform settings (an owner may require two factors of everyone) live in one row.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table operators (
      id text primary key,
      name text not null,
      email text not null,
      role text not null check (role in ('owner', 'admin', 'support', 'auditor')),
      status text not null default 'active' check (status in ('active', 'disabled')),
      password_hash text,
      must_change_password boolean not null default false,
      totp_secret text,
      totp_enabled_at timestamptz,
      totp_last_step bigint,
      sso_subject text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      last_sign_in_at timestamptz
    );
    create unique index operators_email_uq on operators (lower(email));
    create unique index operators_sso_uq on operators (sso_subject) where sso_subject is not null;

    create table operator_recovery_codes (
      operator_id text not null references operators (id) on delete cascade,
      code_hash text not null,
      used_at timestamptz,
      primary key (operator_id, code_hash)
    );

    create table operator_tokens (
      id text primary key,
      operator_id text not null references operators (id) on delete cascade,
      name text not null,
      role text not null check (role in ('owner', 'admin', 'support', 'auditor')),
      token_hash text not null unique,
      created_at timestamptz not null default now(),
      expires_at timestamptz not null,
      revoked_at timestamptz,
      last_used_at timestamptz
    );
    create index operator_tokens_operator_idx on operator_tokens (operator_id);

    create table platform_settings (
      id boolean primary key default true check (id),
      require_two_factor boolean not null default false,
      updated_at timestamptz not null default now()
    );
    insert into platform_settings (id) values (true);

    alter table console_sessions add column operator_id text references operators (id) on delete cascade;
    alter table console_sessions add column pending_second_factor boolean not null default false;
    alter table audit_log add column operator_id text;
    create index audit_log_operator_idx on audit_log (operator_id, id desc) where operator_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index audit_log_operator_idx;
    alter table audit_log drop column operator_id;
    alter table console_sessions drop column pending_second_factor;
    alter table console_sessions drop column operator_id;
    drop table platform_settings, operator_tokens, operator_recovery_codes, operators;
  `.execute(db);
}
