import { sql, type Kysely } from 'kysely';

// The async order queue: a batch waits in order_batches until a worker applies it. Workers poll
// this partial index with FOR UPDATE SKIP LOCKED, so it only ever holds the batches still to do.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table order_batches add column pending boolean not null default false;
    create index order_batches_pending_idx on order_batches (created_at) where pending;

    -- Revocations by srcLicenseOrderId look up what an order put on an asset.
    create index product_order_idx on product_instances (license_order_id, asset_id);
    create index merchandise_order_idx on merchandise_instances (license_order_id, asset_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index merchandise_order_idx;
    drop index product_order_idx;
    drop index order_batches_pending_idx;
    alter table order_batches drop column pending;
  `.execute(db);
}
