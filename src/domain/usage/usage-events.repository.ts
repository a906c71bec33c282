import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

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

  async denied(denial: {
    at: Date;
    appId: string;
    enterpriseId: number | null;
    product: string;
    code: number;
  }): Promise<void> {
    await sql`
      insert into usage_events (kind, at, app_id, enterprise_id, product, code)
      values ('denied', ${denial.at}, ${denial.appId}, ${denial.enterpriseId}, ${denial.product}, ${denial.code})
    `.execute(this.db);
  }
}
