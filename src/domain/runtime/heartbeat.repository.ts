import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { preparedQuery, type Slots } from '../../db/prepared-statements.js';
import { LOST_BECAUSE, productUseAt, sinceLastBeat } from './runtime.repository.js';

/** One heartbeat as the statement takes it: the app's lease on this machine, at `now`. */
export interface BeatVisit {
  leaseId: string;
  appId: string;
  fingerprint: string;
  now: Date;
  /** The expiry this heartbeat extends the lease to (never shortened). */
  extendTo: Date;
  /**
   * The row is written only when its stored expiry is before this: while it is later, the lease
   * outlives a missed beat or two without a write, and the beat changes nothing a reader decides.
   */
  writeBefore: Date;
}

/** What a heartbeat's statement answers for one live lease. */
export interface Beat {
  productId: number;
  assetNum: string;
  enterpriseId: number | null;
  holderKind: 'member' | 'lock';
  fingerprint: string;
  expiresAt: Date;
  usedMs: number;
  lostBecause: string | null;
  startsAt: number | null;
  endsAt: number | null;
  limitTimeDuration: number | null;
  /** The product's whole use, this lease's included; null when it has no time limit. */
  productUsedMs: number | null;
}

interface BeatRow {
  ord: number;
  product_id: number;
  asset_num: string;
  enterprise_id: number | null;
  holder_kind: 'member' | 'lock';
  fingerprint: string;
  expires_at: Date;
  used_ms: number;
  lost_because: string | null;
  starts_at: number | null;
  ends_at: number | null;
  limit_time_duration: number | null;
  product_used_ms: number | null;
}

const SLOTS = ['ords', 'leaseIds', 'appIds', 'fingerprints', 'nows', 'extendTos', 'writeBefores'] as const;
type Slot = (typeof SLOTS)[number];

/**
 * The heartbeats of many leases in one statement: each live lease of the app on the machine that
 * beats is read with why it may no longer run, and only those whose stored expiry is due
 * (`write_before`) are written: their use charged up to now and their expiry extended. The rest
 * answer from the row as it is, their use counted up to now without storing it, so most beats
 * write nothing (no row version, no WAL). The leases written are locked in id order, so two such
 * statements never wait for each other in a cycle, and one ended meanwhile is re-checked under the
 * lock (it then answers nothing).
 */
const beatStatement = preparedQuery<BeatRow, Slot>(SLOTS, (_db, v: Slots<Slot>) => {
  const now = sql.ref('j.now');
  return sql<BeatRow>`
    with q as (
      select * from unnest(${v.ords}::int[], ${v.leaseIds}::text[], ${v.appIds}::text[],
                           ${v.fingerprints}::text[], ${v.nows}::timestamptz[], ${v.extendTos}::timestamptz[],
                           ${v.writeBefores}::timestamptz[])
                 as q(ord, lease_id, app_id, fingerprint, now, extend_to, write_before)
    ), judged as (
      select q.ord, q.now, q.extend_to, q.write_before, l.id, l.product_id, l.enterprise_id, l.holder_kind, l.fingerprint,
             l.expires_at, l.heartbeat_at, l.used_ms, a.asset_num, p.limit_time_duration,
             ${LOST_BECAUSE} as lost_because,
             nullif(greatest(coalesce(a.limit_start_time, 0), coalesce(p.limit_start_time, 0)), 0) as starts_at,
             least(a.limit_end_time, p.limit_end_time) as ends_at
        from q
        join runtime_leases l on l.id = q.lease_id and l.app_id = q.app_id and l.fingerprint = q.fingerprint
        join product_instances p on p.id = l.product_id
        join assets a on a.id = l.asset_id
        left join assets h on h.id = l.lock_asset_id and l.lock_asset_id <> l.asset_id
       where l.ended_at is null and l.expires_at > q.now
    ), due as (
      select j.*, j.expires_at < j.write_before and j.lost_because is null as due from judged j
    ), locked as (
      select r.id from runtime_leases r
       where r.id in (select id from due where due)
       order by r.id
         for update of r
    ), beaten as (
      update runtime_leases r
         set used_ms = r.used_ms + ${sinceLastBeat(now, 'r')}, heartbeat_at = j.now,
             expires_at = greatest(r.expires_at, j.extend_to)
        from due j
       where r.id = j.id and r.id in (select id from locked)
         and r.ended_at is null and r.expires_at > j.now
      returning r.id, r.expires_at, r.used_ms
    ), answered as (
      select j.ord, j.now, j.id, j.product_id, j.asset_num, j.enterprise_id, j.holder_kind, j.fingerprint,
             coalesce(b.expires_at, j.expires_at) as expires_at,
             coalesce(b.used_ms, j.used_ms + ${sinceLastBeat(now, 'j')}) as used_ms,
             j.lost_because, j.starts_at, j.ends_at, j.limit_time_duration
        from due j
        left join beaten b on b.id = j.id
       where not j.due or b.id is not null
    )
    select b.ord, b.product_id, b.asset_num, b.enterprise_id, b.holder_kind, b.fingerprint, b.expires_at,
           b.used_ms, b.lost_because, b.starts_at, b.ends_at, b.limit_time_duration,
           case when b.limit_time_duration is null then null
                else coalesce((select ${productUseAt(sql.ref('b.product_id'), sql.ref('b.now'))}
                                 from runtime_usage u where u.product_id = b.product_id), 0)
           end as product_used_ms
      from answered b
  `;
});

function toBeat(r: BeatRow): Beat {
  return {
    productId: r.product_id,
    assetNum: r.asset_num,
    enterpriseId: r.enterprise_id,
    holderKind: r.holder_kind,
    fingerprint: r.fingerprint,
    expiresAt: r.expires_at,
    usedMs: Number(r.used_ms),
    lostBecause: r.lost_because,
    startsAt: r.starts_at === null ? null : Number(r.starts_at),
    endsAt: r.ends_at === null ? null : Number(r.ends_at),
    limitTimeDuration: r.limit_time_duration === null ? null : Number(r.limit_time_duration),
    productUsedMs: r.product_used_ms === null ? null : Number(r.product_used_ms),
  };
}

/** The heartbeat's statement (the rest of the runtime's SQL is in runtime.repository.ts). */
export class HeartbeatRepository {
  constructor(private readonly db: Db) {}

  /**
   * One answer per visit, in order: its Beat, or undefined when the app has no such live lease on
   * that machine. The visits must name distinct leases: a lease given twice in one statement is
   * updated once and would answer only one of them.
   */
  async beat(visits: readonly BeatVisit[]): Promise<Array<Beat | undefined>> {
    if (visits.length === 0) return [];
    const rows = await beatStatement(this.db, {
      ords: visits.map((_, i) => i),
      leaseIds: visits.map((v) => v.leaseId),
      appIds: visits.map((v) => v.appId),
      fingerprints: visits.map((v) => v.fingerprint),
      nows: visits.map((v) => v.now),
      extendTos: visits.map((v) => v.extendTo),
      writeBefores: visits.map((v) => v.writeBefore),
    });
    const answers: Array<Beat | undefined> = visits.map(() => undefined);
    for (const row of rows) answers[row.ord] = toBeat(row);
    return answers;
  }
}
