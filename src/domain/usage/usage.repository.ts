import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';

export type Bucket = 'hour' | 'day';

/** What the usage is narrowed to, resolved to the database's ids (null: any). */
export interface UsageScope {
  product: string | null;
  enterpriseId: number | null;
  appId: string | null;
  from: Date;
  to: Date;
  bucket: Bucket;
}

/** One bucket's seats, summed over the licenses in scope. */
export interface SeatRow {
  at: Date;
  peakSeats: number;
  /** Seats licensed by the licenses counted; null when one of them is unlimited. */
  licensedSeats: number | null;
  seatMs: number;
}

export interface DenialRow {
  at: Date;
  code: number;
  denied: number;
}

export interface ConsumptionRow {
  at: Date;
  amount: number;
}

/** A license (one product on one asset) over the whole range. */
export interface LicenseUsage {
  product: string;
  assetNum: string;
  enterpriseId: number;
  enterpriseName: string | null;
  licensedSeats: number | null;
  peakSeats: number;
  seatMs: number;
  /** Buckets of the range the license was counted in. */
  buckets: number;
  /** Buckets whose peak reached the licensed seats. */
  bucketsAtCapacity: number;
}

function seatTable(bucket: Bucket): RawBuilder<unknown> {
  return bucket === 'hour' ? sql`usage_hourly` : sql`usage_daily`;
}

function truncate(bucket: Bucket, column: RawBuilder<unknown>): RawBuilder<Date> {
  return bucket === 'hour' ? sql<Date>`${column}` : sql<Date>`date_trunc('day', ${column}, 'UTC')`;
}

/** The scope's conditions on a rollup table aliased `r` (denials have no app-less product id). */
function where(scope: UsageScope, column = sql`r.bucket`): RawBuilder<boolean> {
  return sql<boolean>`${column} >= ${scope.from} and ${column} < ${scope.to}
    and (${scope.product}::text is null or r.product = ${scope.product})
    and (${scope.enterpriseId}::bigint is null or r.enterprise_id = ${scope.enterpriseId})
    and (${scope.appId}::text is null or r.app_id = ${scope.appId})`;
}

/** Reads the usage rollups (migration 0175). */
export class UsageRepository {
  constructor(private readonly db: Db) {}

  async enterpriseId(globalId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('enterprises')
      .select('id')
      .where('global_id', '=', globalId)
      .executeTakeFirst();
    return row === undefined ? undefined : Number(row.id);
  }

  async appId(appKey: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', appKey)
      .executeTakeFirst();
    return row?.id;
  }

  async seats(scope: UsageScope): Promise<SeatRow[]> {
    const result = await sql<SeatRow>`
      select r.bucket as at, sum(r.peak_seats)::int as "peakSeats",
             case when bool_or(r.licensed_seats is null) then null else sum(r.licensed_seats)::int end
               as "licensedSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from ${seatTable(scope.bucket)} r
       where ${where(scope)}
       group by r.bucket order by r.bucket
    `.execute(this.db);
    return result.rows;
  }

  async denials(scope: UsageScope): Promise<DenialRow[]> {
    const at = truncate(scope.bucket, sql`r.bucket`);
    const result = await sql<DenialRow>`
      select ${at} as at, r.code, sum(r.denied)::int as denied
        from usage_denials r
       where ${where(scope)}
       group by 1, r.code order by 1, r.code
    `.execute(this.db);
    return result.rows;
  }

  /** Consumption is kept per day: an hourly view sees each day's amount at its first hour. */
  async consumption(scope: UsageScope): Promise<ConsumptionRow[]> {
    const result = await sql<ConsumptionRow>`
      select r.bucket as at, sum(r.amount)::float8 as amount
        from usage_consumption r
       where ${where(scope)}
       group by r.bucket order by r.bucket
    `.execute(this.db);
    return result.rows;
  }

  /** Per license over the range, for "at capacity" and "least used"; daily rows when the range is long. */
  async licenses(scope: UsageScope): Promise<LicenseUsage[]> {
    const result = await sql<LicenseUsage>`
      select r.product, r.asset_num as "assetNum", r.enterprise_id::float8 as "enterpriseId",
             e.name as "enterpriseName",
             case when bool_or(r.licensed_seats is null) then null else max(r.licensed_seats) end as "licensedSeats",
             max(r.peak_seats) as "peakSeats", sum(r.seat_ms)::float8 as "seatMs",
             count(distinct r.bucket)::int as buckets,
             count(distinct r.bucket) filter (where r.licensed_seats is not null
                                               and r.peak_seats >= r.licensed_seats)::int as "bucketsAtCapacity"
        from ${seatTable(scope.bucket)} r
        left join enterprises e on e.id = r.enterprise_id
       where ${where(scope)}
       group by r.product_id, r.product, r.asset_num, r.enterprise_id, e.name
    `.execute(this.db);
    return result.rows;
  }

  /** Each enterprise's refused check-outs for lack of a seat (90005) over the range. */
  async seatDenialsByEnterprise(scope: UsageScope): Promise<Array<{ enterpriseId: number; denied: number }>> {
    const result = await sql<{ enterpriseId: number; denied: number }>`
      select r.enterprise_id::float8 as "enterpriseId", sum(r.denied)::int as denied
        from usage_denials r
       where ${where(scope)} and r.code = 90005
       group by r.enterprise_id
    `.execute(this.db);
    return result.rows;
  }
}
