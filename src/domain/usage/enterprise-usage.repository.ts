import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import type { Bucket } from './usage.repository.js';
import { isRelayApp, relayIdOf } from './relay-app-id.js';

/**
 * The enterprise console's usage reads. Every query takes the enterprise's id as its first
 * condition, from the administrator's session and never from the request: an id of another
 * enterprise in the query string has nothing to reach (tenant isolation lives here, in SQL).
 */
export interface EnterpriseUsageRange {
  enterpriseId: number;
  from: Date;
  to: Date;
  bucket: Bucket;
  /** crmProductId or productUri; null: every product of the enterprise. */
  product: string | null;
}

/** One product's seats in one bucket, summed over its licenses (each its own pool of seats). */
export interface ProductSeatRow {
  product: string;
  at: Date;
  peakSeats: number;
  licensedSeats: number | null;
  seatMs: number;
}

/** Usage one relay reported for the enterprise in the range (its rollups' app id `relay:<id>`). */
export interface RelayUsageRow {
  relayId: string;
  peakSeats: number;
  seatMs: number;
}

export interface ProductDenialRow {
  product: string;
  at: Date;
  denied: number;
}

/**
 * An employee's (or a lock's) refused check-outs of one product on one UTC day, as the audit log
 * recorded them (action lease.denied): how many, the last one's time, code and reason.
 */
export interface RefusalRow {
  /** The last refusal of the day. */
  at: Date;
  times: number;
  account: string;
  memberName: string | null;
  memberGlobalId: string | null;
  product: string;
  code: string;
  reason: string;
}

/** A seat held now, by an employee of the enterprise or by one of its locks. */
export interface HolderRow {
  product: string;
  productName: string | null;
  assetNum: string;
  holderKind: 'member' | 'lock';
  holder: string;
  memberName: string | null;
  memberGlobalId: string | null;
  fingerprint: string;
  offline: boolean;
  since: Date;
}

function seatTable(bucket: Bucket): RawBuilder<unknown> {
  return bucket === 'hour' ? sql`usage_hourly` : sql`usage_daily`;
}

function bucketOf(bucket: Bucket): RawBuilder<Date> {
  return bucket === 'hour' ? sql<Date>`r.bucket` : sql<Date>`date_trunc('day', r.bucket, 'UTC')`;
}

export class EnterpriseUsageRepository {
  constructor(private readonly db: Db) {}

  async seatsByProduct(range: EnterpriseUsageRange): Promise<ProductSeatRow[]> {
    const result = await sql<ProductSeatRow>`
      select r.product, r.bucket as at, sum(r.peak_seats)::int as "peakSeats",
             case when bool_or(r.licensed_seats is null) then null else sum(r.licensed_seats)::int end
               as "licensedSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from ${seatTable(range.bucket)} r
       where r.enterprise_id = ${range.enterpriseId}
         and r.bucket >= ${range.from} and r.bucket < ${range.to}
         and (${range.product}::text is null or r.product = ${range.product})
       group by r.product, r.bucket
       order by r.product, r.bucket
    `.execute(this.db);
    return result.rows;
  }

  /** The products with seats or refusals in the range (the page's choice of product), by name. */
  async productsIn(range: Omit<EnterpriseUsageRange, 'product'>): Promise<string[]> {
    const result = await sql<{ product: string }>`
      select r.product from ${seatTable(range.bucket)} r
       where r.enterprise_id = ${range.enterpriseId} and r.bucket >= ${range.from} and r.bucket < ${range.to}
      union
      select r.product from usage_denials r
       where r.enterprise_id = ${range.enterpriseId} and r.bucket >= ${range.from} and r.bucket < ${range.to}
      order by 1
    `.execute(this.db);
    return result.rows.map((row) => row.product);
  }

  /**
   * The usage relays reported for the enterprise in the range, per relay: the relay's hours are
   * in the rollups under app id `relay:<relay id>` (docs/relay.md), counted in the series too. The
   * peak is the most seats one license held in one period, as the operator's report counts it.
   */
  async relays(range: EnterpriseUsageRange): Promise<RelayUsageRow[]> {
    const result = await sql<RelayUsageRow>`
      select ${relayIdOf(sql`r.app_id`)} as "relayId", max(r.peak_seats)::int as "peakSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from ${seatTable(range.bucket)} r
       where r.enterprise_id = ${range.enterpriseId}
         and r.bucket >= ${range.from} and r.bucket < ${range.to}
         and (${range.product}::text is null or r.product = ${range.product})
         and ${isRelayApp(sql`r.app_id`)}
       group by r.app_id
       order by r.app_id
    `.execute(this.db);
    return result.rows;
  }

  async denialsByProduct(range: EnterpriseUsageRange): Promise<ProductDenialRow[]> {
    const at = bucketOf(range.bucket);
    const result = await sql<ProductDenialRow>`
      select r.product, ${at} as at, sum(r.denied)::int as denied
        from usage_denials r
       where r.enterprise_id = ${range.enterpriseId}
         and r.bucket >= ${range.from} and r.bucket < ${range.to}
         and (${range.product}::text is null or r.product = ${range.product})
       group by r.product, 2
       order by r.product, 2
    `.execute(this.db);
    return result.rows;
  }

  /**
   * Who was refused in the range: a line per employee, product, code and UTC day, the latest day
   * first. A day's refusals are one line however many machines were turned away, so a month of a
   * product at capacity reads in a screen. The audit row names the holder by account (its
   * subject); the employee is looked up in this enterprise only.
   */
  async refusals(range: EnterpriseUsageRange, limit: number): Promise<RefusalRow[]> {
    const result = await sql<RefusalRow>`
      select max(a.created_at) as at, count(*)::int as times, coalesce(a.subject, '') as account,
             m.name as "memberName", m.global_id as "memberGlobalId",
             coalesce(a.detail->>'crmProductId', a.detail->>'productUri', '') as product,
             coalesce(a.detail->>'code', '') as code,
             (array_agg(coalesce(a.detail->>'reason', '') order by a.id desc))[1] as reason
        from audit_log a
        left join members m on m.enterprise_id = ${range.enterpriseId} and m.account = a.subject
                           and not m.deleted
       where a.enterprise_id = ${range.enterpriseId} and a.action = 'lease.denied'
         and a.created_at >= ${range.from} and a.created_at < ${range.to}
         and (${range.product}::text is null or a.detail->>'crmProductId' = ${range.product}
              or a.detail->>'productUri' = ${range.product})
       group by date_trunc('day', a.created_at, 'UTC'), a.subject, m.name, m.global_id, 6, 7
       order by max(a.created_at) desc, max(a.id) desc
       limit ${limit}
    `.execute(this.db);
    return result.rows;
  }

  /** Seats held now: live leases, and checked-in offline leases whose seat is still held. */
  async holders(enterpriseId: number, now: Date, limit: number): Promise<HolderRow[]> {
    const result = await sql<HolderRow>`
      select coalesce(p.crm_product_id, p.product_uri, '') as product, p.product_name as "productName",
             a.asset_num as "assetNum", l.holder_kind as "holderKind",
             coalesce(m.account, h.asset_num, '') as holder, m.name as "memberName",
             m.global_id as "memberGlobalId", l.fingerprint, l.offline, l.created_at as since
        from runtime_leases l
        join product_instances p on p.id = l.product_id
        join assets a on a.id = l.asset_id
        left join members m on m.id = l.member_id
        left join assets h on h.id = l.lock_asset_id
       where l.enterprise_id = ${enterpriseId}
         and ((l.ended_at is null and l.expires_at > ${now}) or l.seat_held_until > ${now})
       order by 1, 5, l.created_at
       limit ${limit}
    `.execute(this.db);
    return result.rows;
  }
}
