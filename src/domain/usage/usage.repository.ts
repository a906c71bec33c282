import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { isRelayApp, relayAppId, relayIdOf } from './relay-app-id.js';

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

/** What a license (one product on one asset) is known by. */
export interface LicenseName {
  product: string;
  assetNum: string;
  enterpriseId: number;
  enterpriseName: string | null;
}

/** A license's numbers over the whole range. */
export interface LicenseTotals {
  productId: number;
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
  // date_bin on a UTC origin is the UTC day, and several times cheaper than date_trunc with a zone.
  return bucket === 'hour'
    ? sql<Date>`${column}`
    : sql<Date>`date_bin('1 day', ${column}, timestamptz '2000-01-01 00:00:00+00')`;
}

/** The scope's conditions on a rollup table aliased `r` (denials have no app-less product id). */
function where(scope: UsageScope, column: RawBuilder<unknown> = sql`r.bucket`): RawBuilder<boolean> {
  return sql<boolean>`${column} >= ${scope.from} and ${column} < ${scope.to}
    and (${scope.product}::text is null or r.product = ${scope.product})
    and (${scope.enterpriseId}::bigint is null or r.enterprise_id = ${scope.enterpriseId})
    and (${scope.appId}::text is null or r.app_id = ${scope.appId})`;
}

/** One license's seats in one bucket (its chart on the operator's Usage page). */
export interface LicenseSeatRow {
  productId: number;
  at: Date;
  peakSeats: number;
  licensedSeats: number | null;
  seatMs: number;
}

/** Reads the usage rollups (migration 0175). */
export class UsageRepository {
  constructor(private readonly db: Db) {}

  /**
   * The enterprises a filter's text names: its global id, its code, or its name whatever the case
   * (people filter by what they know). At most two: a second means the name is not enough.
   */
  async enterpriseIds(text: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom('enterprises')
      .select('id')
      .where((eb) =>
        eb.or([
          eb('global_id', '=', text),
          eb('code', '=', text),
          eb(sql<string>`lower(name)`, '=', text.toLowerCase()),
        ]),
      )
      .limit(2)
      .execute();
    return rows.map((r) => Number(r.id));
  }

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

  /** The app id a relay's reported usage is counted under, when the relay was ever granted seats. */
  async relayAppId(relayId: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('relay_grants')
      .select('relay_id')
      .where('relay_id', '=', relayId)
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : relayAppId(row.relay_id);
  }

  /** Usage in scope that relays reported (app id `relay:<id>`), per relay. */
  async relays(scope: UsageScope): Promise<Array<{ relayId: string; peakSeats: number; seatMs: number }>> {
    const result = await sql<{ relayId: string; peakSeats: number; seatMs: number }>`
      select ${relayIdOf(sql`r.app_id`)} as "relayId", max(r.peak_seats)::int as "peakSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from ${seatTable(scope.bucket)} r
       where ${where(scope)} and ${isRelayApp(sql`r.app_id`)}
       group by r.app_id order by r.app_id
    `.execute(this.db);
    return result.rows;
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

  /**
   * Per license over the range, for "at capacity" and "least used": numbers only, one row a license
   * (the names are read for the few shown: licenseNames). A license's rows are one per app and
   * bucket; its buckets are those of its busiest app, exact for a license used through one app
   * (the usual case) and a lower bound otherwise. Grouping by the key's leading columns with no
   * text to carry keeps a year of a thousand licenses' days a plain hash aggregate.
   */
  async licenses(scope: UsageScope): Promise<LicenseTotals[]> {
    const result = await sql<LicenseTotals>`
      with per_app as (
        select r.product_id, bool_or(r.licensed_seats is null) as unlimited,
               max(r.licensed_seats) as licensed, max(r.peak_seats) as peak, sum(r.seat_ms) as seat_ms,
               count(*) as buckets,
               count(*) filter (where r.licensed_seats is not null and r.peak_seats >= r.licensed_seats)
                 as at_capacity
          from ${seatTable(scope.bucket)} r
         where ${where(scope)}
         group by r.product_id, r.app_id
      )
      select product_id::float8 as "productId",
             case when bool_or(unlimited) then null else max(licensed) end as "licensedSeats",
             max(peak) as "peakSeats", sum(seat_ms)::float8 as "seatMs",
             max(buckets)::int as buckets, max(at_capacity)::int as "bucketsAtCapacity"
        from per_app
       group by product_id
    `.execute(this.db);
    return result.rows;
  }

  /** What names the licenses `productIds`: product, asset and enterprise (a row of each, by the key). */
  async licenseNames(bucket: Bucket, productIds: number[]): Promise<Map<number, LicenseName>> {
    if (productIds.length === 0) return new Map();
    const result = await sql<LicenseName & { productId: number }>`
      select distinct on (r.product_id) r.product_id::float8 as "productId", r.product,
             r.asset_num as "assetNum", r.enterprise_id::float8 as "enterpriseId", e.name as "enterpriseName"
        from ${seatTable(bucket)} r
        left join enterprises e on e.id = r.enterprise_id
       where r.product_id = any(${productIds}::bigint[])
       order by r.product_id, r.bucket desc
    `.execute(this.db);
    return new Map(result.rows.map(({ productId, ...name }) => [productId, name]));
  }

  /**
   * The licenses `productIds` bucket by bucket. A license's peak is its busiest app's, as
   * `licenses` counts its buckets at capacity, so a chart and its "at capacity" count agree.
   */
  async licenseSeats(scope: UsageScope, productIds: readonly number[]): Promise<LicenseSeatRow[]> {
    if (productIds.length === 0) return [];
    const result = await sql<LicenseSeatRow>`
      select r.product_id::float8 as "productId", r.bucket as at, max(r.peak_seats)::int as "peakSeats",
             case when bool_or(r.licensed_seats is null) then null else max(r.licensed_seats)::int end
               as "licensedSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from ${seatTable(scope.bucket)} r
       where ${where(scope)} and r.product_id = any(${[...productIds]}::bigint[])
       group by r.product_id, r.bucket order by r.product_id, r.bucket
    `.execute(this.db);
    return result.rows;
  }

  /**
   * Whether anything answers to the product name: a product instance (by crmProductId or
   * productUri) or a rollup row (a product since revoked, or a refusal of a name no instance has).
   * The rollups' indexes lead with the product; product instances are read only when they miss.
   */
  async productKnown(product: string): Promise<boolean> {
    const result = await sql<{ known: boolean }>`
      select exists (select 1 from usage_daily where product = ${product})
          or exists (select 1 from usage_hourly where product = ${product})
          or exists (select 1 from usage_denials where product = ${product})
          or exists (select 1 from product_instances where crm_product_id = ${product} or product_uri = ${product})
          as known
    `.execute(this.db);
    return result.rows[0]?.known === true;
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
