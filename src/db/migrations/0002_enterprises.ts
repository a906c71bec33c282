import { sql, type Kysely } from 'kysely';

// Enterprises, the channel customers bound to them, their members, and the asset-number counter.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table enterprises (
      id bigserial primary key,
      global_id text not null unique,
      name text not null,
      code text not null unique,
      member_limit integer,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );

    create table customers (
      id text primary key,
      channel_code text,
      channel_customer_id text,
      crm_customer_id text,
      name text,
      customer_type text,
      branch_code text,
      branch_name text,
      address text,
      security_mobile text,
      enterprise_id bigint references enterprises(id),
      is_default boolean not null default false,
      gongxin boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index customers_channel_uq on customers (channel_code, channel_customer_id)
      where channel_customer_id is not null;
    create unique index customers_crm_uq on customers (crm_customer_id) where crm_customer_id is not null;
    create unique index customers_one_default_uq on customers (enterprise_id) where is_default;
    create index customers_enterprise_idx on customers (enterprise_id);

    create table members (
      id bigserial primary key,
      global_id text not null unique,
      enterprise_id bigint not null references enterprises(id),
      user_name text not null,
      account text not null,
      password_hash text,
      name text,
      department_id bigint,
      department_name text,
      remark text,
      password_mobile text,
      identity text not null check (identity in ('admin', 'member')),
      deleted boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index members_account_uq on members (account) where not deleted;
    create index members_enterprise_idx on members (enterprise_id, id) where not deleted;

    -- Asset numbers: one counter shared by every instance, never reissued.
    create sequence asset_number_seq minvalue 1 maxvalue 999999999 no cycle;
    create table issued_asset_numbers (
      asset_num text primary key,
      app_id text not null,
      created_at timestamptz not null default now()
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table issued_asset_numbers, members, customers, enterprises;
    drop sequence asset_number_seq;
  `.execute(db);
}
