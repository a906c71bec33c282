import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { PREPARED } from '../../db/prepared-statements.js';

/** Which product a running copy asks for: its crmProductId, its productUri, or both. */
export interface ProductSelector {
  crmProductId?: string;
  productUri?: string;
}

/** A product instance a holder could run, with everything check-out judges it by. */
export interface Candidate {
  productId: number;
  assetId: string;
  assetNum: string;
  pool: 'own' | 'lent';
  /** Lent to a lent lock: its holder's own pool has one node fewer. */
  lentAway: boolean;
  /** The asset, or for a lent product also the lent lock, is locked or frozen. */
  disabled: boolean;
  startsAt: number | null;
  endsAt: number | null;
  crmProductId: string | null;
  productUri: string | null;
  productName: string | null;
  limitConcurrent: number | null;
  limitTimeDuration: number | null;
  limitAmount: number | null;
  enterpriseId: number | null;
}

interface CandidateRow {
  product_id: number;
  asset_id: string;
  asset_num: string;
  pool: 'own' | 'lent';
  lent_away: boolean;
  disabled: boolean;
  starts_at: number | null;
  ends_at: number | null;
  crm_product_id: string | null;
  product_uri: string | null;
  product_name: string | null;
  limit_concurrent: number | null;
  limit_time_duration: number | null;
  limit_amount: number | null;
  enterprise_id: number | null;
}

/** A candidate's columns as a left join gives them: all null when the lock runs nothing asked for. */
type FoundRow = { [K in keyof CandidateRow]: CandidateRow[K] | null };

function toCandidate(r: CandidateRow): Candidate {
  return {
    productId: r.product_id,
    assetId: r.asset_id,
    assetNum: r.asset_num,
    pool: r.pool,
    lentAway: r.lent_away,
    disabled: r.disabled,
    startsAt: r.starts_at,
    endsAt: r.ends_at,
    crmProductId: r.crm_product_id,
    productUri: r.product_uri,
    productName: r.product_name,
    limitConcurrent: r.limit_concurrent,
    limitTimeDuration: r.limit_time_duration,
    limitAmount: r.limit_amount,
    enterpriseId: r.enterprise_id,
  };
}

// The validity window is the narrower of the asset's and the product's: the latest start, the
// earliest end (null where neither sets one).
const COLUMNS = sql`
  p.id as product_id, a.id as asset_id, a.asset_num, p.crm_product_id, p.product_uri, p.product_name,
  p.limit_concurrent, p.limit_time_duration, p.limit_amount,
  nullif(greatest(coalesce(a.limit_start_time, 0), coalesce(p.limit_start_time, 0)), 0) as starts_at,
  least(a.limit_end_time, p.limit_end_time) as ends_at`;

function productMatches(product: ProductSelector) {
  const crm = product.crmProductId ?? null;
  const uri = product.productUri ?? null;
  return sql`(${crm}::text is null or p.crm_product_id = ${crm}) and (${uri}::text is null or p.product_uri = ${uri})`;
}

/** Milliseconds since the epoch of a timestamptz value or column, as the leases' times are kept. */
export function epochMs(at: Date | RawBuilder<unknown>) {
  return sql`floor(extract(epoch from ${at}::timestamptz) * 1000)::bigint`;
}

/**
 * A time-limited product's whole use at `at`, read from its runtime_usage row `u` (migration
 * 0187): its ended leases' use, its live leases' (`live_base_ms + live_leases × at`), less what
 * live leases past their expiry would overcount (each is charged up to its expiry only), found
 * through the live-expiry index: a cost that does not grow with the product's live leases.
 */
export function productUseAt(productId: RawBuilder<unknown>, at: Date | RawBuilder<unknown>) {
  return sql`(u.used_ms + u.live_base_ms + u.live_leases * ${epochMs(at)}
           - coalesce((select sum(${epochMs(at)} - ${epochMs(sql.ref('x.expires_at'))}) from runtime_leases x
                        where x.product_id = ${productId} and x.ended_at is null and x.expires_at < ${at}::timestamptz), 0))`;
}

/**
 * The insert that charges ended leases (`ended`: product_id, used_ms, created_at) to their
 * products' runtime_usage, and takes a time-limited product's ended leases out of its live count
 * and base, in the same row write (one statement may not update a row twice).
 */
function chargeEnded(ended: RawBuilder<unknown>) {
  return sql`insert into runtime_usage (product_id, used_ms, live_leases, live_base_ms)
        select e.product_id, sum(e.used_ms),
               -count(*) filter (where p.limit_time_duration is not null),
               coalesce(sum(${epochMs(sql.ref('e.created_at'))}) filter (where p.limit_time_duration is not null), 0)
          from ${ended} e join product_instances p on p.id = e.product_id
         group by e.product_id
        on conflict (product_id) do update
          set used_ms = runtime_usage.used_ms + excluded.used_ms,
              live_leases = runtime_usage.live_leases + excluded.live_leases,
              live_base_ms = runtime_usage.live_base_ms + excluded.live_base_ms
        returning 1`;
}

/**
 * Use since the lease's last heartbeat, never past its expiry, in ms (old values in an UPDATE):
 * `now` is a value or, for many leases at once, a column; `lease` qualifies the lease's columns.
 */
export function sinceLastBeat(now: Date | RawBuilder<unknown>, lease?: string) {
  const column = (name: string) => (lease === undefined ? sql.ref(name) : sql.ref(`${lease}.${name}`));
  return sql`greatest(0, floor(extract(epoch from (least(${now}::timestamptz, ${column('expires_at')}) - ${column('heartbeat_at')})) * 1000))::bigint`;
}

/**
 * Why the holder of lease `l` (its product `p`, asset `a`, lent lock `h`) may no longer run the
 * product, or null while it still may: the product or asset revoked, the asset or lent lock
 * disabled, the asset no longer assigned to the member (or the member deleted), the lending
 * returned.
 */
export const LOST_BECAUSE = sql<string | null>`case
  when p.revoked or a.revoked then 'the license was withdrawn'
  when a.locked or a.freezing then 'the asset was disabled'
  when h.locked or h.freezing then 'the lent lock was disabled'
  when h.revoked then 'the lock was withdrawn'
  when l.holder_kind = 'member' and not exists (
    select 1 from asset_assignments aa join members m on m.id = aa.member_id
     where aa.asset_id = l.asset_id and aa.member_id = l.member_id and not m.deleted)
    then 'the asset is no longer assigned to the member'
  when l.pool = 'lent' and not exists (
    select 1 from lent_products lp join asset_lendings al on al.asset_id = lp.asset_id
     where lp.product_id = l.product_id and al.lock_asset_id = l.lock_asset_id)
    then 'the lending was returned'
  else null
end`;

/** A lease with what its heartbeat re-judges: is the product still the holder's to run? */
export interface LeaseState {
  id: string;
  appId: string;
  productId: number;
  assetNum: string;
  holderKind: 'member' | 'lock';
  memberId: number | null;
  lockAssetId: string | null;
  enterpriseId: number | null;
  pool: 'own' | 'lent';
  fingerprint: string;
  offline: boolean;
  createdAt: Date;
  heartbeatAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  endReason: string | null;
  /** An offline lease checked in keeps its seat until then; null once it ended holding none. */
  seatHeldUntil: Date | null;
  usedMs: number;
  /** Why the holder may no longer run it, or null while it still may. */
  lostBecause: string | null;
  startsAt: number | null;
  endsAt: number | null;
  limitTimeDuration: number | null;
  limitAmount: number | null;
}

interface LeaseStateRow {
  id: string;
  app_id: string;
  product_id: number;
  asset_num: string;
  holder_kind: 'member' | 'lock';
  member_id: number | null;
  lock_asset_id: string | null;
  enterprise_id: number | null;
  pool: 'own' | 'lent';
  fingerprint: string;
  offline: boolean;
  created_at: Date;
  heartbeat_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  seat_held_until: Date | null;
  used_ms: number;
  lost_because: string | null;
  starts_at: number | null;
  ends_at: number | null;
  limit_time_duration: number | null;
  limit_amount: number | null;
}

export interface NewLease {
  id: string;
  appId: string;
  productId: number;
  assetId: string;
  holderKind: 'member' | 'lock';
  holderKey: string;
  memberId: number | null;
  lockAssetId: string | null;
  enterpriseId: number | null;
  pool: 'own' | 'lent';
  fingerprint: string;
  offline: boolean;
  now: Date;
  expiresAt: Date;
}

/** A lease as the admin API and the console list it. */
export interface LeaseListing {
  id: string;
  appKey: string;
  assetNum: string;
  crmProductId: string | null;
  productUri: string | null;
  productName: string | null;
  holderKind: 'member' | 'lock';
  holder: string;
  fingerprint: string;
  offline: boolean;
  createdAt: Date;
  heartbeatAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  endReason: string | null;
  usedMs: number;
}

export interface LeaseFilter {
  appKey?: string;
  assetNum?: string;
  product?: string;
  live: boolean;
  now: Date;
  limit: number;
}

/** Runtime leases and usage (migration 0140): the only SQL of the license runtime. */
export class RuntimeRepository {
  constructor(private readonly db: Db) {}

  /** The product instances on assets assigned to the member (optionally one asset of them). */
  async memberCandidates(
    memberId: number,
    product: ProductSelector,
    assetNum?: string,
  ): Promise<Candidate[]> {
    const result = await sql<CandidateRow>`${sql.raw(PREPARED)}
      select ${COLUMNS}, 'own' as pool, (lp.product_id is not null) as lent_away,
             (a.locked or a.freezing) as disabled, m.enterprise_id
        from asset_assignments aa
        join members m on m.id = aa.member_id and not m.deleted
        join assets a on a.id = aa.asset_id and not a.revoked
        join product_instances p on p.asset_id = a.id and not p.revoked
        left join lent_products lp on lp.product_id = p.id
       where aa.member_id = ${memberId}
         and ${productMatches(product)}
         and (${assetNum ?? null}::text is null or a.asset_num = ${assetNum ?? null})
       order by p.id
       limit 100
    `.execute(this.db);
    return result.rows.map(toCandidate);
  }

  /**
   * The products a lock runs: its own, and those a lending moved onto it. The lock must belong to
   * a customer of one of the calling app's channels: another channel's numbers are not found.
   */
  async lockCandidates(
    assetNum: string,
    channels: readonly string[],
    product: ProductSelector,
  ): Promise<{ lockAssetId: string; candidates: Candidate[] } | undefined> {
    // A check-out's first statement, one round trip for the lock and its products, prepared so
    // PostgreSQL plans it once per connection (planning the union cost it more than running it).
    // No row: no such lock; one row with no product: the lock runs nothing asked for.
    const result = await sql<{ lock_asset_id: string } & FoundRow>`${sql.raw(PREPARED)}
      with lock as (
        select a.id from assets a join customers c on c.id = a.customer_id
         where a.asset_num = ${assetNum} and not a.revoked and c.channel_code = any(${[...channels]}::text[])
         limit 1
      ), found as (
        select ${COLUMNS}, 'own' as pool, (lp.product_id is not null) as lent_away,
               (a.locked or a.freezing) as disabled, c.enterprise_id
          from assets a
          join customers c on c.id = a.customer_id
          join product_instances p on p.asset_id = a.id and not p.revoked
          left join lent_products lp on lp.product_id = p.id
         where a.id = (select id from lock) and ${productMatches(product)}
        union all
        select ${COLUMNS}, 'lent' as pool, false as lent_away,
               (a.locked or a.freezing or l.locked or l.freezing) as disabled, ll.enterprise_id
          from lent_locks ll
          join assets l on l.id = ll.lock_asset_id
          join asset_lendings al on al.lock_asset_id = ll.lock_asset_id
          join lent_products lp on lp.asset_id = al.asset_id
          join product_instances p on p.id = lp.product_id and not p.revoked
          join assets a on a.id = p.asset_id and not a.revoked
         where ll.lock_asset_id = (select id from lock) and ${productMatches(product)}
         order by product_id
         limit 100
      )
      select lock.id as lock_asset_id, found.* from lock left join found on true order by found.product_id
    `.execute(this.db);
    const lockAssetId = result.rows[0]?.lock_asset_id;
    if (lockAssetId === undefined) return undefined;
    const candidates = result.rows.filter(
      (r): r is { lock_asset_id: string } & CandidateRow => r.product_id !== null,
    );
    return { lockAssetId, candidates: candidates.map(toCandidate) };
  }

  /**
   * Ends the leases of a product (or, without one, up to `limit` of any) whose heartbeats stopped,
   * charging each its use up to its expiry; an ended lease's use moves into runtime_usage. Answers
   * how many ended.
   */
  async endExpired(
    now: Date,
    productId: number | null,
    limit = 1000,
    leaseId: string | null = null,
  ): Promise<number> {
    const result = await sql<{ ended: number }>`
      with due as (
        select id, ${sinceLastBeat(now)} as delta
          from runtime_leases
         where ended_at is null and expires_at <= ${now}
           and (${productId}::bigint is null or product_id = ${productId})
           and (${leaseId}::text is null or id = ${leaseId})
         order by expires_at
         limit ${limit}
           for update skip locked
      ), ended as (
        update runtime_leases l
           set ended_at = l.expires_at, end_reason = 'expired', heartbeat_at = l.expires_at,
               used_ms = l.used_ms + due.delta
          from due where l.id = due.id
        returning l.id, l.app_id, l.product_id, l.used_ms, l.expires_at, l.created_at
      ), logged as (
        -- In the same statement as the end: the usage rollups count each ended lease once.
        insert into usage_events (kind, at, lease_id, product_id, app_id)
        select 'ended', expires_at, id, product_id, app_id from ended
        returning 1
      ), charged as (
        ${chargeEnded(sql`ended`)}
      )
      select count(*)::int as ended from ended
    `.execute(this.db);
    return result.rows[0]?.ended ?? 0;
  }

  /**
   * The product's use so far: what ended leases left in runtime_usage plus what its live leases
   * have run, and its consumption.
   */
  async usage(productId: number, now: Date): Promise<{ usedMs: number; consumed: number }> {
    const result = await sql<{ used_ms: number; consumed: number }>`
      select coalesce((select ${productUseAt(sql.ref('u.product_id'), now)} from runtime_usage u
                        where u.product_id = ${productId}), 0) as used_ms,
             coalesce((select consumed from runtime_usage where product_id = ${productId}), 0) as consumed
    `.execute(this.db);
    const row = result.rows[0];
    return { usedMs: Number(row?.used_ms ?? 0), consumed: Number(row?.consumed ?? 0) };
  }

  /** Counts a lease just placed of a time-limited product among its live ones (migration 0187). */
  async liveLeaseStarted(productId: number, createdAt: Date): Promise<void> {
    await sql`
      insert into runtime_usage (product_id, live_leases, live_base_ms)
      values (${productId}, 1, -${epochMs(createdAt)})
      on conflict (product_id) do update
        set live_leases = runtime_usage.live_leases + 1, live_base_ms = runtime_usage.live_base_ms + excluded.live_base_ms
    `.execute(this.db);
  }

  /**
   * Inserts the lease, or, when the machine (holder and fingerprint) already has a live lease of
   * this product instance, locks that one instead and answers it with `inserted` false. The unique
   * index of live leases decides which, so a machine's check-outs take turns on it (a second waits
   * for the first to commit, then finds its lease), other machines' never do, and the lookup costs
   * one index probe whatever the planner's statistics say of the license's live leases. (A
   * separate select of the machine's lease was planned as a scan of the license's live leases
   * while the statistics were stale: each check-out of a filling license cost more than the last.)
   */
  async placeLease(lease: NewLease): Promise<{ id: string; inserted: boolean }> {
    const row = await this.db
      .insertInto('runtime_leases')
      .values({
        id: lease.id,
        app_id: lease.appId,
        product_id: lease.productId,
        asset_id: lease.assetId,
        holder_kind: lease.holderKind,
        holder_key: lease.holderKey,
        member_id: lease.memberId,
        lock_asset_id: lease.lockAssetId,
        enterprise_id: lease.enterpriseId,
        pool: lease.pool,
        fingerprint: lease.fingerprint,
        offline: lease.offline,
        created_at: lease.now,
        heartbeat_at: lease.now,
        expires_at: lease.expiresAt,
      })
      .onConflict((oc) =>
        oc
          .columns(['product_id', 'holder_key', 'fingerprint'])
          .where('ended_at', 'is', null)
          // Writes nothing new: the update only locks the machine's live lease and returns it.
          .doUpdateSet({ fingerprint: (eb) => eb.ref('runtime_leases.fingerprint') }),
      )
      // xmax is 0 on a row this statement inserted, the locker's id on one it updated.
      .returning(['id', sql<boolean>`(xmax = 0)`.as('inserted')])
      .executeTakeFirstOrThrow();
    return { id: row.id, inserted: row.inserted };
  }

  /**
   * The app's lease, row-locked, with why its holder may no longer run the product: the product
   * or asset revoked, the asset or lent lock disabled, the asset no longer assigned to the member
   * (or the member deleted), the lending returned.
   */
  async leaseForUpdate(id: string, appId: string): Promise<LeaseState | undefined> {
    return this.lease(id, appId, true);
  }

  /** The same, read without a lock: what check-in and a refused heartbeat look at. */
  async leaseState(id: string, appId: string): Promise<LeaseState | undefined> {
    return this.lease(id, appId, false);
  }

  private async lease(id: string, appId: string, lock: boolean): Promise<LeaseState | undefined> {
    const result = await sql<LeaseStateRow>`${sql.raw(PREPARED)}
      select l.id, l.app_id, l.product_id, a.asset_num, l.holder_kind, l.member_id, l.lock_asset_id,
             l.enterprise_id, l.pool, l.fingerprint, l.offline, l.created_at, l.heartbeat_at, l.expires_at,
             l.ended_at, l.end_reason, l.seat_held_until, l.used_ms, p.limit_time_duration, p.limit_amount,
             nullif(greatest(coalesce(a.limit_start_time, 0), coalesce(p.limit_start_time, 0)), 0) as starts_at,
             least(a.limit_end_time, p.limit_end_time) as ends_at,
             ${LOST_BECAUSE} as lost_because
        from runtime_leases l
        join product_instances p on p.id = l.product_id
        join assets a on a.id = l.asset_id
        left join assets h on h.id = l.lock_asset_id and l.lock_asset_id <> l.asset_id
       where l.id = ${id} and l.app_id = ${appId}
       ${lock ? sql`for update of l` : sql``}
    `.execute(this.db);
    const r = result.rows[0];
    if (r === undefined) return undefined;
    return {
      id: r.id,
      appId: r.app_id,
      productId: r.product_id,
      assetNum: r.asset_num,
      holderKind: r.holder_kind,
      memberId: r.member_id,
      lockAssetId: r.lock_asset_id,
      enterpriseId: r.enterprise_id,
      pool: r.pool,
      fingerprint: r.fingerprint,
      offline: r.offline,
      createdAt: r.created_at,
      heartbeatAt: r.heartbeat_at,
      expiresAt: r.expires_at,
      endedAt: r.ended_at,
      endReason: r.end_reason,
      seatHeldUntil: r.seat_held_until,
      usedMs: r.used_ms,
      lostBecause: r.lost_because,
      startsAt: r.starts_at,
      endsAt: r.ends_at,
      limitTimeDuration: r.limit_time_duration,
      limitAmount: r.limit_amount,
    };
  }

  /**
   * A resumed lease: its use since the last heartbeat charged, its expiry moved to `expiresAt`.
   * With `offline`, a signed lease was handed out for it: it is an offline lease from now on, and
   * keeps its seat when checked in, even if it was checked out online.
   */
  async touch(leaseId: string, now: Date, expiresAt: Date, offline: boolean): Promise<void> {
    await sql`
      update runtime_leases
         set used_ms = used_ms + ${sinceLastBeat(now)}, heartbeat_at = ${now}, expires_at = ${expiresAt},
             offline = offline or ${offline}
       where id = ${leaseId}
    `.execute(this.db);
  }

  /**
   * Ends a live lease, charging its use up to now (or its expiry) and moving that use into
   * runtime_usage; with `seatHeldUntil`, the lease keeps its seat until then. Answers the lease's
   * whole use, or undefined when it had already ended.
   */
  async endLease(
    leaseId: string,
    now: Date,
    reason: string,
    seatHeldUntil: Date | null = null,
  ): Promise<number | undefined> {
    const result = await sql<{ used_ms: number }>`
      with ended as (
        update runtime_leases
           set ended_at = ${now}, end_reason = ${reason}, used_ms = used_ms + ${sinceLastBeat(now)},
               heartbeat_at = least(${now}::timestamptz, expires_at), seat_held_until = ${seatHeldUntil}
         where id = ${leaseId} and ended_at is null
        returning id, app_id, product_id, used_ms, created_at
      ), logged as (
        -- In the same statement as the end: the usage rollups count each ended lease once.
        insert into usage_events (kind, at, lease_id, product_id, app_id)
        select 'ended', ${now}, id, product_id, app_id from ended
        returning 1
      ), charged as (
        ${chargeEnded(sql`ended`)}
      ), released as (
        -- Its seat slot is free at once, or held as long as the lease's seat is (migration 0181).
        update runtime_seat_slots set held_until = coalesce(${seatHeldUntil}::timestamptz, '-infinity')
         where lease_id in (select id from ended)
        returning 1
      )
      select used_ms from ended
    `.execute(this.db);
    return result.rows[0]?.used_ms;
  }

  /**
   * Adds `amount` to the product's consumption unless that passes `limit` (null: no limit).
   * Answers the new total, or undefined when refused.
   */
  async consume(productId: number, amount: number, limit: number | null): Promise<number | undefined> {
    const result = await sql<{ consumed: number }>`
      insert into runtime_usage (product_id, consumed)
      select ${productId}, ${amount} where ${limit}::bigint is null or ${amount} <= ${limit}::bigint
      on conflict (product_id) do update set consumed = runtime_usage.consumed + excluded.consumed
       where ${limit}::bigint is null or runtime_usage.consumed + excluded.consumed <= ${limit}::bigint
      returning consumed
    `.execute(this.db);
    return result.rows[0]?.consumed;
  }

  /** Newest first; only those holding a seat (live, or checked in offline and holding) when `live`. */
  async list(filter: LeaseFilter): Promise<LeaseListing[]> {
    const result = await sql<{
      id: string;
      app_key: string;
      asset_num: string;
      crm_product_id: string | null;
      product_uri: string | null;
      product_name: string | null;
      holder_kind: 'member' | 'lock';
      holder: string;
      fingerprint: string;
      offline: boolean;
      created_at: Date;
      heartbeat_at: Date;
      expires_at: Date;
      ended_at: Date | null;
      end_reason: string | null;
      used_ms: number;
    }>`
      select l.id, ap.app_key, a.asset_num, p.crm_product_id, p.product_uri, p.product_name, l.holder_kind,
             coalesce(m.account, h.asset_num) as holder, l.fingerprint, l.offline, l.created_at,
             l.heartbeat_at, l.expires_at, l.ended_at, l.end_reason, l.used_ms
        from runtime_leases l
        join apps ap on ap.id = l.app_id
        join assets a on a.id = l.asset_id
        join product_instances p on p.id = l.product_id
        left join members m on m.id = l.member_id
        left join assets h on h.id = l.lock_asset_id
       where (${filter.appKey ?? null}::text is null or ap.app_key = ${filter.appKey ?? null})
         and (${filter.assetNum ?? null}::text is null or a.asset_num = ${filter.assetNum ?? null}
              or h.asset_num = ${filter.assetNum ?? null})
         and (${filter.product ?? null}::text is null or p.crm_product_id = ${filter.product ?? null}
              or p.product_uri = ${filter.product ?? null})
         and (not ${filter.live} or (l.ended_at is null and l.expires_at > ${filter.now})
              or l.seat_held_until > ${filter.now})
       order by l.created_at desc, l.id desc
       limit ${filter.limit}
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      appKey: r.app_key,
      assetNum: r.asset_num,
      crmProductId: r.crm_product_id,
      productUri: r.product_uri,
      productName: r.product_name,
      holderKind: r.holder_kind,
      holder: r.holder,
      fingerprint: r.fingerprint,
      offline: r.offline,
      createdAt: r.created_at,
      heartbeatAt: r.heartbeat_at,
      expiresAt: r.expires_at,
      endedAt: r.ended_at,
      endReason: r.end_reason,
      usedMs: r.used_ms,
    }));
  }

  /**
   * Seats held right now, per product name (the gauge's label), across every app: the machines with
   * a live lease or a checked-in offline lease still holding its seat, as check-out counts them.
   */
  async seatsByProduct(now: Date): Promise<Array<{ product: string; seats: number }>> {
    const result = await sql<{ product: string; seats: number }>`
      select coalesce(p.crm_product_id, p.product_uri, 'unknown') as product, count(*)::int as seats
        from (
          select product_id, pool, holder_key, fingerprint from runtime_leases
           where ended_at is null and expires_at > ${now}
          union
          select product_id, pool, holder_key, fingerprint from runtime_leases
           where seat_held_until > ${now}
        ) l join product_instances p on p.id = l.product_id
       group by 1 order by 2 desc limit 500
    `.execute(this.db);
    return result.rows;
  }
}
