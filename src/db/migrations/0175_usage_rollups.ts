import { sql, type Kysely } from 'kysely';

// Usage history (issue 31): seats, denials and consumption kept as time-bucketed rollups, so a
// year of them answers in milliseconds after the raw leases are pruned.
//
// usage_events is the log the rollups are made from: a lease that ends, an amount consumed, a
// refused check-out. Each row is written by the statement (or transaction) that makes the change,
// and the rollup job deletes the rows it rolled in the same transaction as it writes the rollups:
// an event is rolled exactly once, whatever crashes or runs twice. A lease's start writes nothing
// (check-outs and heartbeats stay as cheap as they were): the job reads live leases itself.
//
// usage_hourly and usage_daily: one row per product instance (a license: one product on one
// asset) and app per bucket. Seats are recounted from the raw leases for every bucket a lease
// touched, which is idempotent, so a bucket recounted twice is still right. licensed_seats is the
// instance's limitConcurrent when the bucket was last counted (null: unlimited).
//
// usage_denials counts refused check-outs per hour, product (as the caller named it), enterprise
// (0 when the holder was a lock), app and refusal code; usage_consumption the amount per day.
// None of the rollups references the rows it counts: they outlive pruned leases and deleted apps.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table usage_events (
      id bigint generated always as identity primary key,
      kind text not null check (kind in ('ended', 'consumed', 'denied')),
      at timestamptz not null,
      lease_id text,
      product_id bigint,
      app_id text not null,
      enterprise_id bigint,
      product text,
      code integer,
      amount bigint
    );

    create table usage_hourly (
      bucket timestamptz not null,
      product_id bigint not null,
      app_id text not null,
      enterprise_id bigint not null,
      product text not null,
      asset_num text not null,
      licensed_seats integer,
      peak_seats integer not null,
      seat_ms bigint not null,
      primary key (product_id, app_id, bucket)
    );
    create index usage_hourly_bucket_idx on usage_hourly (bucket);
    create index usage_hourly_product_idx on usage_hourly (product, bucket);
    create index usage_hourly_enterprise_idx on usage_hourly (enterprise_id, bucket);

    create table usage_daily (like usage_hourly including all);

    create table usage_denials (
      bucket timestamptz not null,
      product text not null,
      enterprise_id bigint not null,
      app_id text not null,
      code integer not null,
      denied integer not null,
      primary key (bucket, product, enterprise_id, app_id, code)
    );
    create index usage_denials_product_idx on usage_denials (product, bucket);
    create index usage_denials_enterprise_idx on usage_denials (enterprise_id, bucket);

    create table usage_consumption (
      bucket timestamptz not null,
      product_id bigint not null,
      app_id text not null,
      enterprise_id bigint not null,
      product text not null,
      amount bigint not null,
      primary key (product_id, app_id, bucket)
    );
    create index usage_consumption_product_idx on usage_consumption (product, bucket);

    -- Recounting a bucket reads the leases of one product instance by start time.
    create index runtime_leases_usage_idx on runtime_leases (product_id, created_at);
    -- Pruning finds the leases that ended long ago without reading the rest.
    create index runtime_leases_ended_idx on runtime_leases (ended_at) where ended_at is not null;

    -- Leases that ended before this version are rolled by the first run, like any other.
    insert into usage_events (kind, at, lease_id, product_id, app_id)
    select 'ended', ended_at, id, product_id, app_id from runtime_leases where ended_at is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index runtime_leases_usage_idx, runtime_leases_ended_idx;
    drop table usage_consumption, usage_denials, usage_daily, usage_hourly, usage_events;
  `.execute(db);
}
