import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { SecondFactorKind, SignInMethod } from '../../db/schema.js';

export interface SessionRow {
  kind: 'operator' | 'enterprise';
  tokenHash: string | null;
  /** The named operator of an operator session; null when opened with the admin key. */
  operatorId: string | null;
  method: SignInMethod;
  /** Signed in with a password; the second factor is still to come. */
  pendingSecondFactor: boolean;
  /** Opened with a one-time password: this session, and no other, owes the new one. */
  owesPasswordChange: boolean;
  /** The second factor that made the session whole, if one did. */
  secondFactor: SecondFactorKind | null;
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
    /** The operator's credential generation, read before the sign-in was judged. */
    operatorGeneration?: number;
    method?: SignInMethod;
    pendingSecondFactor?: boolean;
    owesPasswordChange?: boolean;
    /** For a session opened with the admin key: the key's fingerprint. */
    keyFingerprint?: string;
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
        operator_generation: row.operatorGeneration ?? null,
        owes_password_change: row.owesPasswordChange ?? false,
        key_fingerprint: row.keyFingerprint ?? null,
      })
      .execute();
  }

  /**
   * The live session with this hash, marked seen now: one statement checks the idle and absolute
   * expiry and that the session's credential still stands (a named operator active and still of
   * the generation it signed in under; the admin key still the server's, `keyFingerprint` null
   * when the key is turned off), and only then extends the idle expiry, so a session that ended
   * is never kept alive by being polled, and concurrent pages of one browser cannot race.
   */
  async touch(
    idHash: string,
    idleSeconds: number,
    keyFingerprint: string | null,
  ): Promise<SessionRow | undefined> {
    const row = await this.db
      .updateTable('console_sessions')
      .set({ last_seen_at: sql<Date>`now()` })
      .where('id_hash', '=', idHash)
      .where('expires_at', '>', sql<Date>`now()`)
      .where('last_seen_at', '>', sql<Date>`now() - make_interval(secs => ${idleSeconds})`)
      .where((eb) => {
        const standing = [
          eb('kind', '=', 'enterprise'),
          eb.exists(
            eb
              .selectFrom('operators as o')
              .select('o.id')
              .whereRef('o.id', '=', 'console_sessions.operator_id')
              .whereRef('o.credential_generation', '=', 'console_sessions.operator_generation')
              .where('o.status', '=', 'active'),
          ),
        ];
        if (keyFingerprint !== null) {
          standing.push(eb.and([eb('operator_id', 'is', null), eb('key_fingerprint', '=', keyFingerprint)]));
        }
        return eb.or(standing);
      })
      .returning([
        'kind',
        'token_hash',
        'operator_id',
        'sign_in_method',
        'pending_second_factor',
        'owes_password_change',
        'second_factor',
      ])
      .executeTakeFirst();
    return (
      row && {
        kind: row.kind,
        tokenHash: row.token_hash,
        operatorId: row.operator_id,
        method: row.sign_in_method,
        pendingSecondFactor: row.pending_second_factor,
        owesPasswordChange: row.owes_password_change,
        secondFactor: row.second_factor,
      }
    );
  }

  /** Whether the session owes a new password (it was opened with the one-time one). */
  async owesPasswordChange(idHash: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('console_sessions')
      .select('owes_password_change')
      .where('id_hash', '=', idHash)
      .executeTakeFirst();
    return row?.owes_password_change ?? false;
  }

  /** The new password was given: the session owes nothing more of it. */
  async passwordChanged(idHash: string): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ owes_password_change: false })
      .where('id_hash', '=', idHash)
      .execute();
  }

  /** The second factor was given: the session is a whole one now, and says which it was. */
  async secondFactorGiven(idHash: string, kind: SecondFactorKind): Promise<void> {
    await this.db
      .updateTable('console_sessions')
      .set({ pending_second_factor: false, second_factor: kind })
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
