import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { epochMs, productUseAt } from '../runtime/runtime.repository.js';

/** A product a relay's grant put on one of its locks, still live (not revoked). */
export interface ServedProduct {
  assetNum: string;
  crmProductId: string | null;
  limitConcurrent: number | null;
  limitEndTime: number | null;
  /** The grant's shares of usage limits: seconds of use, units of amount (null: none). */
  limitTimeDuration: number | null;
  limitAmount: number | null;
}

/** What the relay has used so far of a served product's shares. */
export interface ServedUse {
  assetNum: string;
  crmProductId: string | null;
  usedMs: number;
  consumed: number;
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
      limit_time_duration: string | null;
      limit_amount: number | null;
    }>`
      select a.asset_num, p.crm_product_id, p.limit_concurrent, p.limit_end_time,
             p.limit_time_duration, p.limit_amount
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
      limitTimeDuration: r.limit_time_duration === null ? null : Number(r.limit_time_duration),
      limitAmount: r.limit_amount,
    }));
  }

  /**
   * The use at `now` of the newest product of each license and product with a usage limit on the
   * relay's customer's assets, revoked or not (a returned grant's products are revoked, and their
   * use is still what the return says): what the relay used of its grant's shares.
   */
  async servedUse(
    channelCode: string,
    channelCustomerId: string,
    now: Date,
    committed: boolean,
  ): Promise<ServedUse[]> {
    // Committed use counts each live lease to its expiry: a machine holding an offline lease may
    // run on it until then, whatever the relay does now.
    const time = committed
      ? sql`u.used_ms + coalesce((select sum(${epochMs(sql.ref('x.expires_at'))} - ${epochMs(sql.ref('x.created_at'))})
                                    from runtime_leases x
                                   where x.product_id = n.id and x.ended_at is null), 0)`
      : productUseAt(sql.ref('n.id'), now);
    // The newest product of each license first, so only their use is read (each renewal leaves
    // its revoked predecessors behind).
    const result = await sql<{
      asset_num: string;
      crm_product_id: string | null;
      used_ms: string | number | null;
      consumed: string | number | null;
    }>`
      with newest as (
        select distinct on (a.asset_num, p.crm_product_id) p.id, a.asset_num, p.crm_product_id
          from customers c
          join product_instances p on p.customer_id = c.id
          join assets a on a.id = p.asset_id
         where c.channel_code = ${channelCode} and c.channel_customer_id = ${channelCustomerId}
           and (p.limit_time_duration is not null or p.limit_amount is not null)
         order by a.asset_num, p.crm_product_id, p.id desc
      )
      select n.asset_num, n.crm_product_id, ${time} as used_ms, u.consumed
        from newest n
        left join runtime_usage u on u.product_id = n.id
       order by n.asset_num, n.crm_product_id
    `.execute(this.db);
    return result.rows.map((r) => ({
      assetNum: r.asset_num,
      crmProductId: r.crm_product_id,
      usedMs: Number(r.used_ms ?? 0),
      consumed: Number(r.consumed ?? 0),
    }));
  }
}
