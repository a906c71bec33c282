import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

/** A license of the enterprise (one product on one of its assets) to simulate usage for. */
export interface SimulatedLicense {
  productId: number;
  product: string;
  crmProductId: string | null;
  productUri: string | null;
  assetNum: string;
  licensedSeats: number | null;
  /** The employee the asset is assigned to (his account), who checks its product out; else none. */
  holder: string | null;
}

/** One simulated hour or day of a license, in usage_hourly's or usage_daily's shape. */
export interface SimulatedSeats {
  bucket: Date;
  productId: number;
  product: string;
  assetNum: string;
  licensedSeats: number | null;
  peakSeats: number;
  seatMs: number;
}

export interface SimulatedDenials {
  bucket: Date;
  product: string;
  denied: number;
}

/** The SQL of `POST /admin/usage/simulate` (the demo's month of usage). */
export class UsageSimulationRepository {
  constructor(private readonly db: Db) {}

  async licenses(enterpriseId: number): Promise<SimulatedLicense[]> {
    const result = await sql<SimulatedLicense>`
      select p.id::float8 as "productId", coalesce(p.crm_product_id, p.product_uri, '') as product,
             p.crm_product_id as "crmProductId", p.product_uri as "productUri",
             a.asset_num as "assetNum", p.limit_concurrent as "licensedSeats", m.account as holder
        from product_instances p
        join assets a on a.id = p.asset_id
        join customers c on c.id = a.customer_id
        left join asset_assignments aa on aa.asset_id = a.id
        left join members m on m.id = aa.member_id and m.enterprise_id = ${enterpriseId} and not m.deleted
       where c.enterprise_id = ${enterpriseId}
       order by 2, a.asset_num, p.id
    `.execute(this.db);
    return result.rows;
  }

  /** Whether the enterprise has usage history already: a simulation never mixes into real history. */
  async hasHistory(enterpriseId: number): Promise<boolean> {
    const result = await sql<{ found: boolean }>`
      select exists (select 1 from usage_daily where enterprise_id = ${enterpriseId})
          or exists (select 1 from usage_hourly where enterprise_id = ${enterpriseId})
          or exists (select 1 from usage_denials where enterprise_id = ${enterpriseId}) as found
    `.execute(this.db);
    return result.rows[0]?.found === true;
  }

  /** Writes rows of usage_hourly or usage_daily in one statement (unnest: one round trip). */
  async insertSeats(
    table: 'hour' | 'day',
    enterpriseId: number,
    appId: string,
    rows: readonly SimulatedSeats[],
  ): Promise<void> {
    if (rows.length === 0) return;
    const target = table === 'hour' ? sql`usage_hourly` : sql`usage_daily`;
    await sql`
      insert into ${target} (bucket, product_id, app_id, enterprise_id, product, asset_num, licensed_seats,
                             peak_seats, seat_ms)
      select r.bucket, r.product_id, ${appId}, ${enterpriseId}, r.product, r.asset_num, r.licensed_seats,
             r.peak_seats, r.seat_ms
        from unnest(${rows.map((r) => r.bucket.toISOString())}::timestamptz[],
                    ${rows.map((r) => r.productId)}::bigint[], ${rows.map((r) => r.product)}::text[],
                    ${rows.map((r) => r.assetNum)}::text[], ${rows.map((r) => r.licensedSeats)}::int[],
                    ${rows.map((r) => r.peakSeats)}::int[], ${rows.map((r) => r.seatMs)}::bigint[])
             as r(bucket, product_id, product, asset_num, licensed_seats, peak_seats, seat_ms)
      on conflict (product_id, app_id, bucket) do nothing
    `.execute(this.db);
  }

  async insertDenials(
    enterpriseId: number,
    appId: string,
    code: number,
    rows: readonly SimulatedDenials[],
  ): Promise<void> {
    if (rows.length === 0) return;
    await sql`
      insert into usage_denials (bucket, product, enterprise_id, app_id, code, denied)
      select r.bucket, r.product, ${enterpriseId}, ${appId}, ${code}, r.denied
        from unnest(${rows.map((r) => r.bucket.toISOString())}::timestamptz[],
                    ${rows.map((r) => r.product)}::text[], ${rows.map((r) => r.denied)}::int[])
             as r(bucket, product, denied)
      on conflict (bucket, product, enterprise_id, app_id, code) do update
         set denied = usage_denials.denied + excluded.denied
    `.execute(this.db);
  }
}
