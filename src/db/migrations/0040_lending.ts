import { sql, type Kysely } from 'kysely';

// Lending (member op 10): a member moves the entitlements of assets assigned to it onto a lent
// lock. Three tables, each with the key that keeps concurrent calls honest:
//   lent_locks      one row per lock while it carries entitlements: lent to one member (the key),
//                   and a member holds one lent lock at a time (the unique index);
//   asset_lendings  one row per lent asset: an asset is lent to one lock at a time (the key);
//   lent_products   the product instances a lending moved, one node each.
// Ending a lending is a delete; the cascades take what hangs below it.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table lent_locks (
      lock_asset_id text primary key references assets(id),
      member_id bigint not null references members(id),
      enterprise_id bigint not null references enterprises(id),
      created_at timestamptz not null default now()
    );
    create unique index lent_locks_member_uq on lent_locks (member_id);
    create index lent_locks_enterprise_idx on lent_locks (enterprise_id);

    create table asset_lendings (
      asset_id text primary key references assets(id),
      lock_asset_id text not null references lent_locks(lock_asset_id) on delete cascade,
      created_at timestamptz not null default now()
    );
    create index asset_lendings_lock_idx on asset_lendings (lock_asset_id);

    create table lent_products (
      product_id bigint primary key references product_instances(id),
      asset_id text not null references asset_lendings(asset_id) on delete cascade,
      created_at timestamptz not null default now()
    );
    create index lent_products_asset_idx on lent_products (asset_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table lent_products, asset_lendings, lent_locks;`.execute(db);
}
