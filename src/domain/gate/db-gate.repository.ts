import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export class DbGateRepository {
  constructor(private readonly db: Db) {}

  /** One round trip: counts the hit and records the nonce; `fresh` is 0 when it was seen before. */
  async record(
    appId: string,
    nonce: string,
    window: number,
    expiresAt: Date,
  ): Promise<{ hits: number; fresh: boolean }> {
    const result = await sql<{ hits: number; fresh: number }>`
      with rate as (
        insert into rate_counters (app_id, window_start, hits) values (${appId}, ${window}, 1)
        on conflict (app_id, window_start) do update set hits = rate_counters.hits + 1
        returning hits
      ), fresh as (
        insert into nonces (app_id, nonce, expires_at) values (${appId}, ${nonce}, ${expiresAt})
        on conflict do nothing
        returning 1
      )
      select (select hits from rate) as hits, (select count(*)::int from fresh) as fresh
    `.execute(this.db);
    const row = result.rows[0];
    return { hits: Number(row?.hits ?? 0), fresh: Number(row?.fresh ?? 0) === 1 };
  }

  async purge(oldestWindow: number): Promise<void> {
    await this.db
      .deleteFrom('nonces')
      .where('expires_at', '<', sql<Date>`now()`)
      .execute();
    await this.db.deleteFrom('rate_counters').where('window_start', '<', oldestWindow).execute();
  }
}
