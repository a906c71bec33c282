import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { UsedShare } from './relay-request.js';

/** A report as imported. */
export interface RelayReportRow {
  id: string;
  relayId: string;
  grantId: string;
  issuedAt: Date;
  firstHour: Date | null;
  lastHour: Date | null;
  hours: number;
  peakSeats: number;
  /** The most seats past the grant in any hour, under an overage allowance. */
  overagePeak: number;
  /** What the relay had used of each share of a usage limit its grant holds (none: []). */
  used: UsedShare[];
  seatMs: number;
  refused: number;
  auditEntries: number;
  auditDigest: string;
  importedAt: Date;
}

/** A license as the vendor's usage rollups key it. */
export interface ReportedLicense {
  assetNum: string;
  crmProductId: string;
  productId: number;
  enterpriseId: number;
}

/** An hour of a relay's usage, keyed as the rollups are. */
export interface RelayUsageHour {
  at: Date;
  productId: number;
  enterpriseId: number;
  product: string;
  assetNum: string;
  licensedSeats: number;
  peakSeats: number;
  seatMs: number;
}

export interface RelayDenialHour {
  at: Date;
  product: string;
  enterpriseId: number;
  code: number;
  denied: number;
}

/** Relays' usage reports (migration 0188) and their hours in the usage rollups (migration 0175). */
export class RelayReportsRepository {
  constructor(private readonly db: Db) {}

  /** Records a report; false when a report with its id was imported already. */
  async insert(report: RelayReportRow): Promise<boolean> {
    const inserted = await this.db
      .insertInto('relay_reports')
      .values({
        id: report.id,
        relay_id: report.relayId,
        grant_id: report.grantId,
        issued_at: report.issuedAt,
        first_hour: report.firstHour,
        last_hour: report.lastHour,
        hours: report.hours,
        peak_seats: report.peakSeats,
        overage_peak: report.overagePeak,
        shares_used: report.used.length === 0 ? null : JSON.stringify(report.used),
        seat_ms: report.seatMs,
        refused: report.refused,
        audit_entries: report.auditEntries,
        audit_digest: report.auditDigest,
        imported_at: report.importedAt,
      })
      .onConflict((oc) => oc.column('id').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }

  /** The relay's newest report by when it was written. */
  async latest(relayId: string): Promise<{ id: string; issuedAt: Date } | undefined> {
    const row = await this.db
      .selectFrom('relay_reports')
      .select(['id', 'issued_at'])
      .where('relay_id', '=', relayId)
      .orderBy('issued_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row === undefined ? undefined : { id: row.id, issuedAt: row.issued_at };
  }

  /** The newest imported report of each relay named. */
  async latestOf(relayIds: readonly string[]): Promise<Map<string, RelayReportRow>> {
    if (relayIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('relay_reports')
      .selectAll()
      .distinctOn('relay_id')
      .where('relay_id', 'in', [...relayIds])
      .orderBy('relay_id')
      .orderBy('issued_at', 'desc')
      .execute();
    return new Map(
      rows.map((r) => [
        r.relay_id,
        {
          id: r.id,
          relayId: r.relay_id,
          grantId: r.grant_id,
          issuedAt: r.issued_at,
          firstHour: r.first_hour,
          lastHour: r.last_hour,
          hours: r.hours,
          peakSeats: r.peak_seats,
          overagePeak: r.overage_peak,
          used: (r.shares_used ?? []) as UsedShare[],
          // bigint columns arrive as text from PostgreSQL.
          seatMs: Number(r.seat_ms),
          refused: r.refused,
          auditEntries: Number(r.audit_entries),
          auditDigest: r.audit_digest,
          importedAt: r.imported_at,
        },
      ]),
    );
  }

  /** The vendor's license for each (asset, product) named: its newest live product instance. */
  async licenses(
    pairs: ReadonlyArray<{ assetNum: string; crmProductId: string }>,
  ): Promise<ReportedLicense[]> {
    if (pairs.length === 0) return [];
    const result = await sql<ReportedLicense>`
      select distinct on (w.asset_num, w.product) w.asset_num as "assetNum", w.product as "crmProductId",
             p.id::float8 as "productId", coalesce(c.enterprise_id, 0)::float8 as "enterpriseId"
        from unnest(${pairs.map((p) => p.assetNum)}::text[], ${pairs.map((p) => p.crmProductId)}::text[])
               as w(asset_num, product)
        join assets a on a.asset_num = w.asset_num
        join product_instances p on p.asset_id = a.id and p.crm_product_id = w.product
        left join customers c on c.id = a.customer_id
       order by w.asset_num, w.product, p.revoked, p.id desc
    `.execute(this.db);
    return result.rows;
  }

  /**
   * A relay's hours, written to the hourly rollups under the relay's app id: a later report's
   * figures for an hour replace an earlier one's. Answers the days they fall in, to recount.
   */
  async writeHours(
    appId: string,
    hours: readonly RelayUsageHour[],
  ): Promise<Array<{ productId: number; appId: string; day: Date }>> {
    if (hours.length === 0) return [];
    const result = await sql<{ productId: number; appId: string; day: Date }>`
      with written as (
        insert into usage_hourly (bucket, product_id, app_id, enterprise_id, product, asset_num,
                                  licensed_seats, peak_seats, seat_ms)
        select h.bucket, h.product_id, ${appId}, h.enterprise_id, h.product, h.asset_num,
               h.licensed_seats, h.peak_seats, h.seat_ms
          from unnest(${hours.map((h) => h.at.toISOString())}::timestamptz[],
                      ${hours.map((h) => h.productId)}::bigint[],
                      ${hours.map((h) => h.enterpriseId)}::bigint[],
                      ${hours.map((h) => h.product)}::text[],
                      ${hours.map((h) => h.assetNum)}::text[],
                      ${hours.map((h) => h.licensedSeats)}::int[],
                      ${hours.map((h) => h.peakSeats)}::int[],
                      ${hours.map((h) => h.seatMs)}::bigint[])
               as h(bucket, product_id, enterprise_id, product, asset_num, licensed_seats, peak_seats, seat_ms)
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

  /** A relay's refusals per hour, replacing an earlier report's for the same hour and code. */
  async writeDenials(appId: string, denials: readonly RelayDenialHour[]): Promise<void> {
    if (denials.length === 0) return;
    await sql`
      insert into usage_denials (bucket, product, enterprise_id, app_id, code, denied)
      select d.bucket, d.product, d.enterprise_id, ${appId}, d.code, d.denied
        from unnest(${denials.map((d) => d.at.toISOString())}::timestamptz[],
                    ${denials.map((d) => d.product)}::text[],
                    ${denials.map((d) => d.enterpriseId)}::bigint[],
                    ${denials.map((d) => d.code)}::int[],
                    ${denials.map((d) => d.denied)}::int[]) as d(bucket, product, enterprise_id, code, denied)
      on conflict (bucket, product, enterprise_id, app_id, code) do update set denied = excluded.denied
    `.execute(this.db);
  }
}
