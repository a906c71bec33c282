import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface LoginCandidate {
  memberId: number;
  passwordHash: string | null;
}

/** Where an attempt comes from: the caller's (normalised) remote address and the asking app. */
export interface LoginSource {
  address: string;
  appId: string;
}

/** A count of attempts as the next attempt finds it. */
export interface AttemptCount {
  failures: number;
  /** A wait or lock is running: the attempt is refused, uncounted. */
  waiting: boolean;
  /** The last attempt is older than the window: this one counts as the first. */
  stale: boolean;
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
   * The account's count from anywhere, its row created if need be and locked until the
   * transaction ends: every attempt on the account, from any source and any instance, queues
   * here, so what the transaction reads and writes next is not raced.
   */
  async lockAccount(account: string, windowSeconds: number): Promise<AttemptCount> {
    const { rows } = await sql<AttemptCount>`
      insert into login_attempts as a (account, failures, locked_until, updated_at)
      values (${account}, 0, null, now())
      on conflict (account) do update set account = excluded.account
      returning a.failures,
                coalesce(a.locked_until > now(), false) as waiting,
                a.updated_at < now() - make_interval(secs => ${windowSeconds}::int) as stale`.execute(
      this.db,
    );
    const row = rows[0];
    if (!row) throw new Error('login_attempts upsert returned no row');
    return row;
  }

  /** The count of one source of the account; call it after lockAccount. */
  async findSource(
    account: string,
    source: LoginSource,
    windowSeconds: number,
  ): Promise<AttemptCount | undefined> {
    return this.db
      .selectFrom('login_source_attempts')
      .select([
        'failures',
        sql<boolean>`coalesce(locked_until > now(), false)`.as('waiting'),
        sql<boolean>`updated_at < now() - make_interval(secs => ${windowSeconds}::int)`.as('stale'),
      ])
      .where('account', '=', account)
      .where('address', '=', source.address)
      .where('app_id', '=', source.appId)
      .executeTakeFirst();
  }

  /** Writes the account's new count and its wait (none when null), under lockAccount's lock. */
  async recordAccount(account: string, failures: number, waitSeconds: number | null): Promise<void> {
    await this.db
      .updateTable('login_attempts')
      .set({ failures, locked_until: waitUntil(waitSeconds), updated_at: sql<Date>`now()` })
      .where('account', '=', account)
      .execute();
  }

  /** Writes a source's new count and its wait or lock (none when null). */
  async recordSource(
    account: string,
    source: LoginSource,
    failures: number,
    waitSeconds: number | null,
  ): Promise<void> {
    await this.db
      .insertInto('login_source_attempts')
      .values({
        account,
        address: source.address,
        app_id: source.appId,
        failures,
        locked_until: waitUntil(waitSeconds),
        updated_at: sql<Date>`now()`,
      })
      .onConflict((oc) =>
        oc.columns(['account', 'address', 'app_id']).doUpdateSet((eb) => ({
          failures: eb.ref('excluded.failures'),
          locked_until: eb.ref('excluded.locked_until'),
          updated_at: eb.ref('excluded.updated_at'),
        })),
      )
      .execute();
  }

  /** A right password: its source's failures are forgiven (the account's, from anywhere, stay). */
  async forgiveSource(account: string, source: LoginSource): Promise<void> {
    await this.db
      .deleteFrom('login_source_attempts')
      .where('account', '=', account)
      .where('address', '=', source.address)
      .where('app_id', '=', source.appId)
      .execute();
  }

  /**
   * Whether this source of the account waits now: its own wait, or the account's if the source
   * has itself failed on the account within the window (LoginService.verify says why). Read
   * without a lock, before any hashing.
   */
  async waiting(account: string, source: LoginSource, windowSeconds: number): Promise<boolean> {
    const { rows } = await sql<{ waiting: boolean }>`
      with own as (
        select locked_until, updated_at from login_source_attempts
         where account = ${account} and address = ${source.address} and app_id = ${source.appId}
      )
      select coalesce((select locked_until > now() from own), false)
          or (coalesce((select locked_until > now() from login_attempts where account = ${account}), false)
              and exists (select 1 from own
                           where updated_at >= now() - make_interval(secs => ${windowSeconds}::int)))
          as waiting`.execute(this.db);
    return rows[0]?.waiting === true;
  }

  /** An operator's or the member's new password forgives every attempt on the account. */
  async clear(account: string): Promise<void> {
    await this.db.deleteFrom('login_attempts').where('account', '=', account).execute();
    await this.db.deleteFrom('login_source_attempts').where('account', '=', account).execute();
  }

  /** Rows that no longer slow or lock anything; attempts on unknown accounts end here too. */
  async purgeStale(windowSeconds: number): Promise<void> {
    const before = sql<Date>`now() - make_interval(secs => ${windowSeconds}::int)`;
    for (const table of ['login_source_attempts', 'login_attempts'] as const) {
      await this.db
        .deleteFrom(table)
        .where('updated_at', '<', before)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', sql<Date>`now()`)]))
        .execute();
    }
  }
}

function waitUntil(seconds: number | null) {
  return seconds === null ? null : sql<Date>`now() + make_interval(secs => ${seconds}::float8)`;
}
