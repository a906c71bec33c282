import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface SessionRow {
  kind: 'operator' | 'enterprise';
  tokenHash: string | null;
}

/** The console's sessions, by the hash of the cookie's secret. */
export class ConsoleSessionsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: {
    idHash: string;
    kind: 'operator' | 'enterprise';
    tokenHash: string | null;
    expiresAt: Date;
  }): Promise<void> {
    await this.db
      .insertInto('console_sessions')
      .values({ id_hash: row.idHash, kind: row.kind, token_hash: row.tokenHash, expires_at: row.expiresAt })
      .execute();
  }

  /**
   * The live session with this hash, marked seen now: one statement both checks the idle and
   * absolute expiry and extends the idle one, so concurrent pages of one browser cannot race.
   */
  async touch(idHash: string, idleSeconds: number): Promise<SessionRow | undefined> {
    const row = await this.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql<Date>`now()` })
      .where('id_hash', '=', idHash)
      .where('expires_at', '>', sql<Date>`now()`)
      .where('last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
      .returning(['kind', 'token_hash'])
      .executeTakeFirst();
    return row && { kind: row.kind, tokenHash: row.token_hash };
  }

  /** Deletes the session; its user token, if any, is answered so the caller can revoke it. */
  async delete(idHash: string): Promise<string | null | undefined> {
    const row = await this.db
      .deleteFrom('console_sessions')
      .where('id_hash', '=', idHash)
      .returning('token_hash')
      .executeTakeFirst();
    return row?.token_hash;
  }

  async purgeStale(idleSeconds: number): Promise<void> {
    await this.db
      .deleteFrom('console_sessions')
      .where((eb) =>
        eb.or([
          eb('expires_at', '<=', sql<Date>`now()`),
          eb('last_seen_at', '<=', sql<Date>`now() - make_interval(secs => ${idleSeconds})`),
        ]),
      )
      .execute();
  }
}
