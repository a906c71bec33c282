import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';

/**
 * The key of the transaction advisory lock the rollup job runs under. One job at a time over all
 * instances: a recount that read the leases before another committed must not overwrite the
 * other's newer one.
 */
export const ROLLUP_LOCK_KEY = 7_303_175_031n;

/** An event of the usage log (migration 0175), as the job reads it. */
export interface UsageEvent {
  id: number;
  kind: 'ended' | 'consumed' | 'denied';
  at: Date;
  leaseId: string | null;
  productId: number | null;
  appId: string;
  enterpriseId: number | null;
  product: string | null;
  code: number | null;
  amount: number | null;
}

/**
 * Where a lease's seat is free again: an ended lease's end, its expiry if its heartbeats stopped
 * first (the sweep ends it later), or the end of the seat a checked-in offline lease holds; a live
 * lease's is provisional, now (or its expiry, if past), and recounted when it ends.
 */
export function seatEnd(now: Date): RawBuilder<Date> {
  return sql<Date>`(case when l.ended_at is null then least(l.expires_at, ${now}::timestamptz)
                    else coalesce(l.seat_held_until, least(l.ended_at, l.expires_at)) end)`;
}

/** The SQL of the usage rollups: the job's reads and writes, and pruning. */
export class RollupRepository {
  constructor(private readonly db: Db) {}

  /** Whether this transaction got the job's lock (another instance's run holds it otherwise). */
  async tryLock(): Promise<boolean> {
    const result = await sql<{ locked: boolean }>`
      select pg_try_advisory_xact_lock(${ROLLUP_LOCK_KEY.toString()}::bigint) as locked
    `.execute(this.db);
    return result.rows[0]?.locked === true;
  }

  /** The oldest `limit` events. */
  async events(limit: number): Promise<UsageEvent[]> {
    const result = await sql<UsageEvent>`
      select id::float8 as id, kind, at, lease_id as "leaseId", product_id::float8 as "productId",
             app_id as "appId", enterprise_id::float8 as "enterpriseId", product, code,
             amount::float8 as amount
        from usage_events order by id limit ${limit}
    `.execute(this.db);
    return result.rows;
  }

  async deleteEvents(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await sql`delete from usage_events where id = any(${ids}::bigint[])`.execute(this.db);
  }

  /**
   * Recounts, from the raw leases, every hour the ended leases `leaseIds` held a seat in and the
   * last two hours of every live lease; answers the days those hours fall in, to recount next.
   * Seat-ms is the seats' time inside the hour; the peak, the most leases holding a seat at one
   * instant, by a sweep over their starts (+1) and ends (−1), ends first at a tie: a seat freed
   * at 10:00 and taken at 10:00 is one seat.
   */
  async recountHours(
    leaseIds: readonly string[],
    now: Date,
  ): Promise<Array<{ productId: number; appId: string; day: Date }>> {
    const end = seatEnd(now);
    const result = await sql<{ productId: number; appId: string; day: Date }>`
      with touched as (
        select l.product_id, l.app_id, h
          from runtime_leases l,
               generate_series(date_trunc('hour', l.created_at, 'UTC'),
                               date_trunc('hour', greatest(l.created_at, ${end} - interval '1 millisecond'), 'UTC'),
                               interval '1 hour') h
         where l.id = any(${[...leaseIds]}::text[])
        union
        select l.product_id, l.app_id, h
          from runtime_leases l,
               generate_series(greatest(date_trunc('hour', l.created_at, 'UTC'),
                                        date_trunc('hour', ${now}::timestamptz - interval '1 hour', 'UTC')),
                               date_trunc('hour', ${now}::timestamptz, 'UTC'), interval '1 hour') h
         where l.ended_at is null
      ), iv as (
        select t.product_id, t.app_id, t.h,
               greatest(l.created_at, t.h) as s, least(${end}, t.h + interval '1 hour') as e
          from touched t
          join runtime_leases l on l.product_id = t.product_id and l.app_id = t.app_id
           and l.created_at < t.h + interval '1 hour' and ${end} > t.h
      ), points as (
        select product_id, app_id, h, s as t, 1 as d from iv
        union all
        select product_id, app_id, h, e as t, -1 as d from iv
      ), running as (
        select product_id, app_id, h,
               sum(d) over (partition by product_id, app_id, h order by t, d rows unbounded preceding) as c
          from points
      ), peaks as (
        select product_id, app_id, h, max(c)::int as peak from running group by product_id, app_id, h
      ), spans as (
        select product_id, app_id, h, round(sum(extract(epoch from e - s) * 1000))::bigint as ms
          from iv group by product_id, app_id, h
      ), written as (
        insert into usage_hourly (bucket, product_id, app_id, enterprise_id, product, asset_num,
                                  licensed_seats, peak_seats, seat_ms)
        select t.h, t.product_id, t.app_id, coalesce(c.enterprise_id, 0),
               coalesce(p.crm_product_id, p.product_uri, ''), a.asset_num, p.limit_concurrent,
               greatest(coalesce(k.peak, 0), 0), coalesce(s.ms, 0)
          from touched t
          join product_instances p on p.id = t.product_id
          join assets a on a.id = p.asset_id
          left join customers c on c.id = a.customer_id
          left join peaks k on k.product_id = t.product_id and k.app_id = t.app_id and k.h = t.h
          left join spans s on s.product_id = t.product_id and s.app_id = t.app_id and s.h = t.h
        on conflict (product_id, app_id, bucket) do update
           set enterprise_id = excluded.enterprise_id, product = excluded.product,
               asset_num = excluded.asset_num, licensed_seats = excluded.licensed_seats,
               peak_seats = excluded.peak_seats, seat_ms = excluded.seat_ms
        returning product_id, app_id, bucket
      )
      select distinct product_id::float8 as "productId", app_id as "appId",
             date_trunc('day', bucket, 'UTC') as day
        from written
    `.execute(this.db);
    return result.rows;
  }

  /** Recounts each day from its hours: the day's peak is its highest hour's, its seat-ms their sum. */
  async recountDays(days: ReadonlyArray<{ productId: number; appId: string; day: Date }>): Promise<void> {
    if (days.length === 0) return;
    await sql`
      with d as (
        select * from unnest(${days.map((d) => d.productId)}::bigint[], ${days.map((d) => d.appId)}::text[],
                             ${days.map((d) => d.day.toISOString())}::timestamptz[]) as d(product_id, app_id, day)
      )
      insert into usage_daily (bucket, product_id, app_id, enterprise_id, product, asset_num,
                               licensed_seats, peak_seats, seat_ms)
      select d.day, d.product_id, d.app_id, max(h.enterprise_id), max(h.product), max(h.asset_num),
             max(h.licensed_seats), max(h.peak_seats), sum(h.seat_ms)
        from d
        join usage_hourly h on h.product_id = d.product_id and h.app_id = d.app_id
         and h.bucket >= d.day and h.bucket < d.day + interval '1 day'
       group by d.day, d.product_id, d.app_id
      on conflict (product_id, app_id, bucket) do update
         set enterprise_id = excluded.enterprise_id, product = excluded.product,
             asset_num = excluded.asset_num, licensed_seats = excluded.licensed_seats,
             peak_seats = excluded.peak_seats, seat_ms = excluded.seat_ms
    `.execute(this.db);
  }

  /** Adds consumed amounts to their days (events rolled once: the caller deletes them alongside). */
  async addConsumption(events: readonly UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    await sql`
      with e as (
        select * from unnest(${events.map((e) => e.productId)}::bigint[], ${events.map((e) => e.appId)}::text[],
                             ${events.map((e) => e.at.toISOString())}::timestamptz[],
                             ${events.map((e) => e.amount ?? 0)}::bigint[]) as e(product_id, app_id, at, amount)
      )
      insert into usage_consumption (bucket, product_id, app_id, enterprise_id, product, amount)
      select date_trunc('day', e.at, 'UTC'), e.product_id, e.app_id, coalesce(max(c.enterprise_id), 0),
             coalesce(max(p.crm_product_id), max(p.product_uri), ''), sum(e.amount)
        from e
        join product_instances p on p.id = e.product_id
        join assets a on a.id = p.asset_id
        left join customers c on c.id = a.customer_id
       group by 1, e.product_id, e.app_id
      on conflict (product_id, app_id, bucket) do update
         set amount = usage_consumption.amount + excluded.amount
    `.execute(this.db);
  }

  /** Adds refused check-outs to their hours, per product, enterprise, app and code. */
  async addDenials(events: readonly UsageEvent[]): Promise<void> {
    if (events.length === 0) return;
    await sql`
      with e as (
        select * from unnest(${events.map((e) => e.product ?? '')}::text[],
                             ${events.map((e) => e.enterpriseId ?? 0)}::bigint[],
                             ${events.map((e) => e.appId)}::text[], ${events.map((e) => e.code ?? 0)}::int[],
                             ${events.map((e) => e.at.toISOString())}::timestamptz[])
               as e(product, enterprise_id, app_id, code, at)
      )
      insert into usage_denials (bucket, product, enterprise_id, app_id, code, denied)
      select date_trunc('hour', at, 'UTC'), product, enterprise_id, app_id, code, count(*)::int
        from e group by 1, product, enterprise_id, app_id, code
      on conflict (bucket, product, enterprise_id, app_id, code) do update
         set denied = usage_denials.denied + excluded.denied
    `.execute(this.db);
  }

  /**
   * Deletes up to `limit` leases whose seat was free before `cutoff`, except those a recount
   * could still need: a lease whose end the job has not rolled yet, a live lease of the same
   * product instance that started before it ended (its end recounts those hours), and leases an
   * offline activation names (its replay protection). Answers how many went.
   */
  async pruneLeases(cutoff: Date, limit: number): Promise<number> {
    const result = await sql<{ pruned: number }>`
      with old as (
        select l.id
          from runtime_leases l
         where l.ended_at is not null and l.ended_at < ${cutoff}
           and coalesce(l.seat_held_until, l.ended_at) < ${cutoff}
           and not exists (select 1 from usage_events e where e.kind = 'ended' and e.lease_id = l.id)
           and not exists (select 1 from runtime_leases x
                            where x.product_id = l.product_id and x.ended_at is null
                              and x.created_at < coalesce(l.seat_held_until, l.ended_at))
           and not exists (select 1 from runtime_activations a where a.lease_id = l.id)
         limit ${limit}
           for update skip locked
      ), gone as (
        delete from runtime_leases l using old where l.id = old.id returning 1
      )
      select count(*)::int as pruned from gone
    `.execute(this.db);
    return result.rows[0]?.pruned ?? 0;
  }

  /** Deletes rollup rows of buckets before `cutoff`; answers how many went. */
  /**
   * Deletes up to `limit` hourly rollups older than `cutoff`: their days stay in usage_daily. An
   * hour a live lease of the license spans is kept, since that lease's end recounts it.
   */
  async pruneHours(cutoff: Date, limit: number): Promise<number> {
    const result = await sql<{ pruned: number }>`
      with old as (
        select h.ctid as row
          from usage_hourly h
         where h.bucket < ${cutoff}
           and not exists (select 1 from runtime_leases l
                            where l.product_id = h.product_id and l.ended_at is null
                              and l.created_at < h.bucket + interval '1 hour')
         limit ${limit}
      ), gone as (
        delete from usage_hourly h using old where h.ctid = old.row returning 1
      )
      select count(*)::int as pruned from gone
    `.execute(this.db);
    return result.rows[0]?.pruned ?? 0;
  }

  async pruneRollups(cutoff: Date): Promise<number> {
    const result = await sql<{ pruned: number }>`
      with h as (delete from usage_hourly where bucket < ${cutoff} returning 1),
           d as (delete from usage_daily where bucket < ${cutoff} returning 1),
           n as (delete from usage_denials where bucket < ${cutoff} returning 1),
           c as (delete from usage_consumption where bucket < ${cutoff} returning 1)
      select ((select count(*) from h) + (select count(*) from d) + (select count(*) from n)
              + (select count(*) from c))::int as pruned
    `.execute(this.db);
    return result.rows[0]?.pruned ?? 0;
  }
}
