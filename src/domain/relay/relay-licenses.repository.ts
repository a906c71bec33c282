import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

/** A product a relay's grant put on one of its locks, still live (not revoked). */
export interface ServedProduct {
  assetNum: string;
  crmProductId: string | null;
  limitConcurrent: number | null;
  limitEndTime: number | null;
}

/** What the relay's own database holds of the grants it served. */
export class RelayLicensesRepository {
  constructor(private readonly db: Db) {}

  /** The live products on the assets of the relay's customer: what the last applied grant gave. */
  async servedProducts(channelCode: string, channelCustomerId: string): Promise<ServedProduct[]> {
    const result = await sql<{
      asset_num: string;
      crm_product_id: string | null;
      limit_concurrent: number | null;
      limit_end_time: string | null;
    }>`
      select a.asset_num, p.crm_product_id, p.limit_concurrent, p.limit_end_time
        from customers c
        join product_instances p on p.customer_id = c.id and not p.revoked
        join assets a on a.id = p.asset_id
       where c.channel_code = ${channelCode} and c.channel_customer_id = ${channelCustomerId}
       order by a.asset_num, p.crm_product_id
    `.execute(this.db);
    return result.rows.map((r) => ({
      assetNum: r.asset_num,
      crmProductId: r.crm_product_id,
      limitConcurrent: r.limit_concurrent,
      limitEndTime: r.limit_end_time === null ? null : Number(r.limit_end_time),
    }));
  }
}
