import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { preparedQuery, type Slots } from '../../db/prepared-statements.js';
import { LOST_BECAUSE, sinceLastBeat } from './runtime.repository.js';

/** One heartbeat as the statement takes it: the app's lease on this machine, at `now`. */
export interface BeatVisit {
  leaseId: string;
  appId: string;
  fingerprint: string;
  now: Date;
  /** The expiry this heartbeat extends the lease to (never shortened). */
  extendTo: Date;
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

const SLOTS = ['ords', 'leaseIds', 'appIds', 'fingerprints', 'nows', 'extendTos'] as const;
type Slot = (typeof SLOTS)[number];

/**
 * The heartbeats of many leases in one statement: each live lease of the app on the machine
 * that beats gets its use charged and its expiry extended, with why it may no longer run. The
 * leases are locked in id order, so two such statements never wait for each other in a cycle,
 * and a lease ended meanwhile is re-checked under the lock (it then answers nothing).
 */
const beatStatement = preparedQuery<BeatRow, Slot>(SLOTS, (_db, v: Slots<Slot>) => {
  const now = sql.ref('q.now');
  return sql<BeatRow>`
    with q as (
      select * from unnest(${v.ords}::int[], ${v.leaseIds}::text[], ${v.appIds}::text[],
                           ${v.fingerprints}::text[], ${v.nows}::timestamptz[], ${v.extendTos}::timestamptz[])
                 as q(ord, lease_id, app_id, fingerprint, now, extend_to)
    ), judged as (
      select q.ord, q.now, q.extend_to, l.id, a.asset_num, p.limit_time_duration,
             ${LOST_BECAUSE} as lost_because,
             nullif(greatest(coalesce(a.limit_start_time, 0), coalesce(p.limit_start_time, 0)), 0) as starts_at,
             least(a.limit_end_time, p.limit_end_time) as ends_at
        from q
        join runtime_leases l on l.id = q.lease_id and l.app_id = q.app_id and l.fingerprint = q.fingerprint
        join product_instances p on p.id = l.product_id
        join assets a on a.id = l.asset_id
        left join assets h on h.id = l.lock_asset_id and l.lock_asset_id <> l.asset_id
       where l.ended_at is null and l.expires_at > q.now
       order by l.id
         for update of l
    ), beaten as (
      update runtime_leases r
         set used_ms = r.used_ms + ${sinceLastBeat(now, 'r')}, heartbeat_at = q.now,
             expires_at = greatest(r.expires_at, q.extend_to)
        from judged q
       where r.id = q.id
      returning q.ord, r.id, r.product_id, r.enterprise_id, r.holder_kind, r.fingerprint, r.expires_at,
                r.used_ms, q.asset_num, q.lost_because, q.starts_at, q.ends_at, q.limit_time_duration
    )
    select b.ord, b.product_id, b.asset_num, b.enterprise_id, b.holder_kind, b.fingerprint, b.expires_at,
           b.used_ms, b.lost_because, b.starts_at, b.ends_at, b.limit_time_duration,
           case when b.limit_time_duration is null then null
                else coalesce((select u.used_ms from runtime_usage u where u.product_id = b.product_id), 0)
                     + coalesce((select sum(x.used_ms) from runtime_leases x
                                  where x.product_id = b.product_id and x.ended_at is null and x.id <> b.id), 0)
                     + b.used_ms
           end as product_used_ms
      from beaten b
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
    });
    const answers: Array<Beat | undefined> = visits.map(() => undefined);
    for (const row of rows) answers[row.ord] = toBeat(row);
    return answers;
  }
}
