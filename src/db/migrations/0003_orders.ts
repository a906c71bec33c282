import { sql, type Kysely } from 'kysely';

// License orders and what they put on assets: asset rows, extensions, merchandise trees and product
// instances, plus the assignment of an asset to a member.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    -- One row per (app, channel, channel order id): the idempotency record of a batchOrder call.
    create table order_batches (
      id text primary key,
      app_id text not null,
      channel_code text not null,
      channel_order_id text not null,
      body_hash text not null,
      sync_mode text not null check (sync_mode in ('sync', 'async')),
      payload jsonb,
      result jsonb not null,
      created_at timestamptz not null default now(),
      unique (app_id, channel_code, channel_order_id)
    );

    create table license_orders (
      id text primary key,
      batch_id text not null references order_batches(id),
      app_id text not null,
      channel_code text not null,
      channel_order_id text not null,
      sequence integer not null,
      customer_id text,
      order_type text not null,
      license_type text not null,
      src_license_order_id text,
      status text not null check (status in ('pending', 'completed', 'failed')),
      reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index license_orders_batch_idx on license_orders (batch_id);
    create index license_orders_pending_idx on license_orders (created_at) where status = 'pending';

    create table assets (
      id text primary key,
      asset_num text not null,
      license_type text not null,
      customer_id text not null references customers(id),
      grantable boolean not null default true,
      key_chip_type integer,
      locked boolean not null default false,
      freezing boolean not null default false,
      borrowed_usb_key boolean not null default false,
      transfered_asset_num boolean not null default false,
      limit_start_time bigint,
      limit_end_time bigint,
      revoked boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create unique index assets_num_uq on assets (asset_num);
    create index assets_customer_idx on assets (customer_id) where not revoked;

    create table asset_extends (
      asset_id text not null references assets(id),
      extend_code text not null,
      extend_value text,
      primary key (asset_id, extend_code)
    );

    create table merchandise_instances (
      id bigserial primary key,
      asset_id text not null references assets(id),
      parent_id bigint references merchandise_instances(id),
      license_order_id text not null,
      channel_order_id text,
      channel_code text,
      customer_id text not null,
      license_type text not null,
      crm_product_id text,
      parent_crm_product_id text,
      merchandise_num text,
      merchandise_name text,
      parent_merchandise_num text,
      time_duration_expression text,
      src_license_order_id text,
      revoked boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index merchandise_asset_idx on merchandise_instances (asset_id) where not revoked;

    create table product_instances (
      id bigserial primary key,
      asset_id text not null references assets(id),
      merchandise_ins_id bigint references merchandise_instances(id),
      license_order_id text not null,
      channel_order_id text,
      channel_code text,
      customer_id text not null,
      license_type text not null,
      crm_product_id text,
      parent_crm_product_id text,
      product_uri text,
      gms_pid text,
      app_key text,
      product_name text,
      product_type text,
      limit_start_time bigint,
      limit_end_time bigint,
      limit_concurrent integer,
      limit_time_duration bigint,
      limit_amount integer,
      trial smallint not null default 0,
      trial_end_date bigint,
      time_unit text,
      time_unit_quantity integer,
      time_duration_expression text,
      src_license_order_id text,
      passwords jsonb,
      features jsonb,
      revoked boolean not null default false,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index product_asset_idx on product_instances (asset_id) where not revoked;
    create index product_customer_idx on product_instances (customer_id, crm_product_id) where not revoked;

    create table asset_assignments (
      asset_id text primary key references assets(id),
      member_id bigint not null references members(id),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    );
    create index asset_assignments_member_idx on asset_assignments (member_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table asset_assignments, product_instances, merchandise_instances, asset_extends, assets,
      license_orders, order_batches;
  `.execute(db);
}
