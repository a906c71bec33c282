import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface RelayHourRow {
  at: Date;
  assetNum: string;
  product: string;
  peakSeats: number;
  seatMs: number;
}

export interface RelayDenialRow {
  at: Date;
  product: string;
  code: number;
  denied: number;
}

/** The relay's own usage rollups, as its report carries them across the gap. */
export class RelayUsageRepository {
  constructor(private readonly db: Db) {}

  /** Complete hours from `from` to `to`, per license and product, every app of the relay together. */
  async hours(from: Date, to: Date): Promise<RelayHourRow[]> {
    const result = await sql<RelayHourRow>`
      select r.bucket as at, r.asset_num as "assetNum", r.product, sum(r.peak_seats)::int as "peakSeats",
             sum(r.seat_ms)::float8 as "seatMs"
        from usage_hourly r
       where r.bucket >= ${from} and r.bucket < ${to}
       group by r.bucket, r.asset_num, r.product
       order by r.bucket, r.asset_num, r.product
    `.execute(this.db);
    return result.rows;
  }

  async denials(from: Date, to: Date): Promise<RelayDenialRow[]> {
    const result = await sql<RelayDenialRow>`
      select r.bucket as at, r.product, r.code, sum(r.denied)::int as denied
        from usage_denials r
       where r.bucket >= ${from} and r.bucket < ${to}
       group by r.bucket, r.product, r.code
       order by r.bucket, r.product, r.code
    `.execute(this.db);
    return result.rows;
  }
}
