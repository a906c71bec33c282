import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { SignInMethod } from '../../db/schema.js';

export interface SessionRow {
  kind: 'operator' | 'enterprise';
  tokenHash: string | null;
  /** The named operator of an operator session; null when opened with the admin key. */
  operatorId: string | null;
  method: SignInMethod;
  /** Signed in with a password; the second factor is still to come. */
  pendingSecondFactor: boolean;
}

/** The console's sessions, by the hash of the cookie's secret. */
export class ConsoleSessionsRepository {
  constructor(private readonly db: Db) {}

  async insert(row: {
    idHash: string;
    kind: 'operator' | 'enterprise';
    tokenHash: string | null;
    expiresAt: Date;
    operatorId?: string;
    method?: SignInMethod;
    pendingSecondFactor?: boolean;
  }): Promise<void> {
    await this.db
      .insertInto('console_sessions')
      .values({
        id_hash: row.idHash,
        kind: row.kind,
        token_hash: row.tokenHash,
        expires_at: row.expiresAt,
        operator_id: row.operatorId ?? null,
        sign_in_method: row.method ?? (row.kind === 'enterprise' ? 'password' : 'key'),
        pending_second_factor: row.pendingSecondFactor ?? false,
      })
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
      .returning(['kind', 'token_hash', 'operator_id', 'sign_in_method', 'pending_second_factor'])
      .executeTakeFirst();
    return (
      row && {
        kind: row.kind,
        tokenHash: row.token_hash,
        operatorId: row.operator_id,
        method: row.sign_in_method,
        pendingSecondFactor: row.pending_second_factor,
      }
    );
  }

  /** The second factor was given: the session is a whole one now. */
  async secondFactorGiven(idHash: string): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ pending_second_factor: false })
      .where('id_hash', '=', idHash)
      .execute();
  }

  /** Counts a wrong second factor; answers how many this session has had. */
  async secondFactorFailed(idHash: string): Promise<number> {
    const row = await this.db
      .updateTable('console_sessions')
      .set((eb) => ({ second_factor_failures: eb('second_factor_failures', '+', 1) }))
      .where('id_hash', '=', idHash)
      .returning('second_factor_failures')
      .executeTakeFirst();
    return row?.second_factor_failures ?? Number.POSITIVE_INFINITY;
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

  /** Ends every session of an operator but `except` (a new password, a reset second factor). */
  async deleteOperatorSessions(operatorId: string, except?: string): Promise<void> {
    let query = this.db.deleteFrom('console_sessions').where('operator_id', '=', operatorId);
    if (except !== undefined) query = query.where('id_hash', '<>', except);
    await query.execute();
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
