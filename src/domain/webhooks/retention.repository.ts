import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export class WebhookRetentionRepository {
  constructor(private readonly db: Db) {}

  /**
   * Deletes up to `limit` of the oldest events that occurred before `cutoff` and that no delivery
   * still waits to send, with their deliveries and (by cascade) attempts; answers how many events
   * went. One statement: the foreign key from deliveries to events is checked at its end, when
   * both are gone. SKIP LOCKED leaves an event another instance is pruning, or a replay is
   * queueing again, to that one.
   */
  async pruneBefore(cutoff: Date, limit: number): Promise<number> {
    const result = await sql<{ pruned: string }>`
      with old as (
        select e.id
          from webhook_events e
         where e.occurred_at < ${cutoff}
           and not exists (
                 select 1 from webhook_deliveries d where d.event_id = e.id and d.status = 'pending')
         order by e.occurred_at
         limit ${limit}
           for update skip locked
      ),
      deliveries as (
        delete from webhook_deliveries d using old where d.event_id = old.id returning d.id
      ),
      events as (
        delete from webhook_events e using old where e.id = old.id returning e.id
      )
      select count(*) as pruned from events
    `.execute(this.db);
    return Number(result.rows[0]?.pruned ?? 0);
  }
}
