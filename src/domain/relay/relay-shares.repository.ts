import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { productUseAt } from '../runtime/runtime.repository.js';

/**
 * The shares of usage limits pool grants hold (docs/relay.md, "Usage limits"): charged to the
 * license's use where the vendor counts it (runtime_usage) when the grant is made, and what the
 * relay did not use given back when it returns the grant. Each is one conditional row write, so a
 * grant and the license's online check-outs and consumes take turns on the row and never together
 * pass the limit.
 */
export class RelaySharesRepository {
  constructor(private readonly db: Db) {}

  /**
   * Charges `ms` of use to a time-limited product when its use at `now` leaves that much of
   * `limitMs`; false, charging nothing, when it does not.
   */
  async chargeTime(productId: number, ms: number, limitMs: number, now: Date): Promise<boolean> {
    const result = await sql<{ product_id: number }>`
      insert into runtime_usage as u (product_id, used_ms)
      select ${productId}, ${ms} where ${ms}::bigint <= ${limitMs}::bigint
      on conflict (product_id) do update set used_ms = u.used_ms + excluded.used_ms
       where ${productUseAt(sql.ref('u.product_id'), now)} + excluded.used_ms <= ${limitMs}::bigint
      returning u.product_id
    `.execute(this.db);
    return result.rows.length > 0;
  }

  /** Charges `amount` to a product's consumption when that leaves it within `limit`. */
  async chargeAmount(productId: number, amount: number, limit: number): Promise<boolean> {
    const result = await sql<{ product_id: number }>`
      insert into runtime_usage as u (product_id, consumed)
      select ${productId}, ${amount} where ${amount}::bigint <= ${limit}::bigint
      on conflict (product_id) do update set consumed = u.consumed + excluded.consumed
       where u.consumed + excluded.consumed <= ${limit}::bigint
      returning u.product_id
    `.execute(this.db);
    return result.rows.length > 0;
  }

  /** Gives back unused shares: never below nothing used, whatever else the row saw meanwhile. */
  async refund(productId: number, ms: number, amount: number): Promise<void> {
    if (ms === 0 && amount === 0) return;
    await sql`
      update runtime_usage
         set used_ms = greatest(0, used_ms - ${ms}::bigint),
             consumed = greatest(0, consumed - ${amount}::bigint)
       where product_id = ${productId}
    `.execute(this.db);
  }
}
