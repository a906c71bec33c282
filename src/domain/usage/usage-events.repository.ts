import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';

export interface Denial {
  at: Date;
  appId: string;
  enterpriseId: number | null;
  product: string;
  code: number;
}

/**
 * A refused check-out's event as a statement of fixed text, for the refusal's audit row to carry
 * (AuditRepository.record's `alongside`): one statement and one commit, so a refusal costs the
 * runtime one round trip, as it did before usage was kept.
 */
export function deniedEvent(denial: Denial): RawBuilder<unknown> {
  return sql`
    insert into usage_events (kind, at, app_id, enterprise_id, product, code)
    values ('denied', ${denial.at}::timestamptz, ${denial.appId}::text, ${denial.enterpriseId}::bigint,
            ${denial.product}::text, ${denial.code}::int)
  `;
}

/**
 * Writes the usage log's events that are not a lease's end (those are written by the statement
 * that ends the lease, in RuntimeRepository). Called inside the transaction of the change itself.
 */
export class UsageEventsRepository {
  constructor(private readonly db: Db) {}

  async consumed(at: Date, productId: number, appId: string, amount: number): Promise<void> {
    await sql`
      insert into usage_events (kind, at, product_id, app_id, amount)
      values ('consumed', ${at}, ${productId}, ${appId}, ${amount})
    `.execute(this.db);
  }

  async denied(denial: Denial): Promise<void> {
    await deniedEvent(denial).execute(this.db);
  }
}
