import type { Db } from '../../db/client.js';

/** A consume as its Idempotency-Key remembers it. */
export interface KeyedConsume {
  appId: string;
  key: string;
  leaseId: string;
  amount: number;
}

/** What a consume applied under a key answered. */
export interface KeptAnswer {
  leaseId: string;
  amount: number;
  consumed: number | null;
  limit: number | null;
}

/** The Idempotency-Keys of consumes (migration 0182), per app. */
export class ConsumeKeysRepository {
  constructor(private readonly db: Db) {}

  /**
   * Claims the key for this call, inside the consume's transaction: true when no call used it
   * before. A concurrent call with the same key waits here until this one's transaction ends: it
   * then finds the key taken (and reads the answer), or free again if this one was refused.
   */
  async claim(call: KeyedConsume, now: Date): Promise<boolean> {
    const row = await this.db
      .insertInto('runtime_consumptions')
      .values({
        app_id: call.appId,
        idempotency_key: call.key,
        lease_id: call.leaseId,
        amount: call.amount,
        created_at: now,
      })
      .onConflict((oc) => oc.doNothing())
      .returning('idempotency_key')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** The answer a key's first consume gave, with what it was asked. */
  async kept(appId: string, key: string): Promise<KeptAnswer | undefined> {
    const row = await this.db
      .selectFrom('runtime_consumptions')
      .select(['lease_id', 'amount', 'consumed', 'amount_limit'])
      .where('app_id', '=', appId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    const number = (value: number | string | null) => (value === null ? null : Number(value));
    return {
      leaseId: row.lease_id,
      amount: Number(row.amount),
      consumed: number(row.consumed),
      limit: number(row.amount_limit),
    };
  }

  /** Stores the answer with the claim, in the same transaction as the effect. */
  async settle(appId: string, key: string, consumed: number, limit: number | null): Promise<void> {
    await this.db
      .updateTable('runtime_consumptions')
      .set({ consumed, amount_limit: limit })
      .where('app_id', '=', appId)
      .where('idempotency_key', '=', key)
      .execute();
  }

  /** Forgets keys older than the window: a repeat after it counts again. */
  async purge(before: Date): Promise<void> {
    await this.db.deleteFrom('runtime_consumptions').where('created_at', '<', before).execute();
  }
}
