import { sql, type Kysely } from 'kysely';

// A time-limited license's use is what its ended leases ran (runtime_usage.used_ms) plus what its
// live leases have run. Summed over the live leases, that cost a check-out and every heartbeat of
// such a license a read of all its live leases: 10,000 seats, 10,000 rows a heartbeat. Kept here
// instead, for products with limit_time_duration (which never changes after a product is made):
// how many leases are live and the sum of their start times, negated, in ms. A live lease's use is
// `now - created_at` (its beats add exactly the time since the last one), so the live leases' use
// at T is `live_base_ms + live_leases * T`, less what those whose expiry passed unended would
// overcount: found through the live-expiry index, which the lease sweeper keeps short.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table runtime_usage
      add column live_leases integer not null default 0,
      add column live_base_ms bigint not null default 0;
    create index runtime_leases_live_expiry_idx on runtime_leases (product_id, expires_at) where ended_at is null;
  `.execute(db);
  await countLiveLeases(db);
}

/** The live leases of time-limited products, counted into runtime_usage (the leases there were before). */
export async function countLiveLeases(db: Kysely<unknown>): Promise<void> {
  await sql`
    insert into runtime_usage (product_id, live_leases, live_base_ms)
    select l.product_id, count(*), -sum(floor(extract(epoch from l.created_at) * 1000))::bigint
      from runtime_leases l join product_instances p on p.id = l.product_id
     where l.ended_at is null and p.limit_time_duration is not null
     group by l.product_id
    on conflict (product_id) do update
      set live_leases = excluded.live_leases, live_base_ms = excluded.live_base_ms;
  `.execute(db);
}
