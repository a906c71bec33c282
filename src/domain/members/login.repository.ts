import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';

export interface LoginCandidate {
  memberId: number;
  passwordHash: string | null;
}

/** When logins of one account are slowed and then refused (see LoginService). */
export interface LockoutPolicy {
  /** From this attempt on, the account waits before the next one... */
  slowFromAttempt: number;
  /** ...this many seconds, doubling with each further attempt... */
  slowBaseSeconds: number;
  /** ...until this attempt locks it for `lockSeconds`. */
  lockAfterAttempts: number;
  lockSeconds: number;
  /** Attempts further apart than this start counting again from one. */
  windowSeconds: number;
}

export class LoginRepository {
  constructor(private readonly db: Db) {}

  async findByAccount(account: string): Promise<LoginCandidate | undefined> {
    const row = await this.db
      .selectFrom('members')
      .select(['id', 'password_hash'])
      .where(sql<string>`lower(account)`, '=', account.toLowerCase())
      .where('deleted', '=', false)
      .executeTakeFirst();
    return row && { memberId: row.id, passwordHash: row.password_hash };
  }

  /**
   * Counts an attempt before its password is checked, in one statement, so concurrent guesses
   * cannot slip past the count on any instance. Answers false, counting nothing, while the
   * account is locked or slowed.
   */
  async admitAttempt(key: string, policy: LockoutPolicy): Promise<boolean> {
    const next = sql<number>`case when a.updated_at < now() - make_interval(secs => ${policy.windowSeconds}::int)
      then 1 else a.failures + 1 end`;
    const row = await sql<{ failures: number }>`
      insert into login_attempts as a (account, failures, locked_until, updated_at)
      values (${key}, 1, ${lockUntil(sql`1`, policy)}, now())
      on conflict (account) do update set
        failures = ${next},
        locked_until = ${lockUntil(next, policy)},
        updated_at = now()
      where a.locked_until is null or a.locked_until <= now()
      returning failures`.execute(this.db);
    return row.rows.length > 0;
  }

  /** A right password, or an operator's new one, forgives the past attempts. */
  async clear(key: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('account', '=', key).execute();
  }

  /** Rows that no longer slow or lock anything; attempts on unknown accounts end here too. */
  async purgeStale(policy: LockoutPolicy): Promise<void> {
    await this.db
      .deleteFrom('login_attempts')
      .where('updated_at', '<', sql<Date>`now() - make_interval(secs => ${policy.windowSeconds}::int)`)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', sql<Date>`now()`)]))
      .execute();
  }
}

function lockUntil(attempt: RawBuilder<unknown>, policy: LockoutPolicy): RawBuilder<Date | null> {
  return sql<Date | null>`case
    when ${attempt} >= ${policy.lockAfterAttempts}::int
      then now() + make_interval(secs => ${policy.lockSeconds}::int)
    when ${attempt} >= ${policy.slowFromAttempt}::int
      then now() + make_interval(secs => ${policy.slowBaseSeconds}::float8
        * power(2, ${attempt} - ${policy.slowFromAttempt}::int))
    else null end`;
}
