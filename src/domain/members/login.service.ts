import type { Db } from '../../db/client.js';
import { appTenant, verifyPassword } from '../shared/passwords.js';
import { loginAddress } from './login-source.js';
import { accountKey } from './member-rules.js';
import { LoginRepository, type AttemptCount, type LoginSource } from './login.repository.js';

/** The source an operator's sign-in counts under: the operator console, as if it were an app. */
const OPERATOR_LOGIN_SOURCE = 'operator-console';
/** Operators' passwords are hashed in the platform's own lane (OperatorsService). */
export const OPERATOR_PASSWORD_LANE = 'platform:operators';

// Verified against this when the account does not exist, so timing does not tell accounts apart.
const DECOY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$0m3vDL2yJ2bPQ3SxgB4c0o6b6mC8nYq1m2Hk8Zp0x1E';

/** How failed logins are slowed and locked (docs/reference.md, "Member logins"). */
export interface LockoutPolicy {
  /** Attempts further apart than this start counting again from one (both counts below). */
  windowSeconds: number;
  /**
   * One source, the account tried from one remote address through one app: from the
   * `slowFromAttempt`-th attempt it waits `slowBaseSeconds`, doubling with each further one,
   * until the `lockAfterAttempts`-th locks it for `lockSeconds`.
   */
  source: {
    slowFromAttempt: number;
    slowBaseSeconds: number;
    lockAfterAttempts: number;
    lockSeconds: number;
  };
  /**
   * The account from anywhere: from the `slowFromAttempt`-th failure on, one attempt every
   * `waitSeconds` from the sources that have themselves failed on it within the window. Never
   * more, and never on a source that has not failed: else failures from elsewhere, as many
   * addresses or applications as a guesser has, would keep the right password out.
   */
  account: { slowFromAttempt: number; waitSeconds: number };
}

/**
 * Per source, attempts 1–2 are free, the 3rd and 4th make it wait 2 s and 4 s, the 5th locks it for
 * 15 minutes. Per account, from the 20th failure from anywhere, one attempt every 5 seconds from
 * each source that has failed on it.
 */
export const LOGIN_LOCKOUT: LockoutPolicy = {
  windowSeconds: 15 * 60,
  source: { slowFromAttempt: 3, slowBaseSeconds: 2, lockAfterAttempts: 5, lockSeconds: 15 * 60 },
  account: { slowFromAttempt: 20, waitSeconds: 5 },
};

/** The wait a source starts after its `attempt`-th failure, or null. */
function sourceWait(attempt: number, policy: LockoutPolicy['source']): number | null {
  if (attempt >= policy.lockAfterAttempts) return policy.lockSeconds;
  if (attempt >= policy.slowFromAttempt)
    return policy.slowBaseSeconds * 2 ** (attempt - policy.slowFromAttempt);
  return null;
}

function accountWait(attempt: number, policy: LockoutPolicy['account']): number | null {
  return attempt >= policy.slowFromAttempt ? policy.waitSeconds : null;
}

const next = (count: AttemptCount | undefined) =>
  count === undefined || count.stale ? 1 : count.failures + 1;

export type LoginOutcome<Id = number> =
  | { status: 'ok'; memberId: Id }
  | { status: 'refused' }
  /** Slowed or locked: answered without looking at the password. */
  | { status: 'locked' };

export class LoginService {
  private readonly logins: LoginRepository;
  /** The last attempt in line on each account being tried in this process. */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(
    private readonly db: Db,
    private readonly policy: LockoutPolicy = LOGIN_LOCKOUT,
  ) {
    this.logins = new LoginRepository(db);
  }

  /**
   * The member behind a full account and password, asked for by app `appId` from remote address
   * `ip`. Unknown accounts are counted and locked like real ones, so neither the answer nor its
   * speed tells which accounts exist. The hash is checked in the asking app's turn
   * (`appTenant`), so one app's logins cannot starve another's.
   *
   * Failures are counted, not attempts: a right password is refused only while failures already
   * recorded make its source wait, never for the attempts of many right logins at once. The
   * account's wait binds only sources that have failed on it within the window: failures from
   * elsewhere slow those sources down, and never refuse a source that has not failed. The price is
   * that a guesser with many sources gets each one's first guess checked while the account waits.
   * So that guesses sent together cannot all be checked before their failures count, the attempts
   * on one account take turns in this process (inTurn): each failure is recorded before the next
   * attempt looks at the lockout. Several instances each take one turn at a time.
   */
  async verify(
    account: string,
    password: string,
    from: { ip: string; appId: string },
  ): Promise<LoginOutcome> {
    const key = accountKey(account);
    return this.inTurn(key, () =>
      this.verifyInTurn(key, password, from, appTenant(from.appId), () => this.logins.findByAccount(key)),
    );
  }

  /**
   * An operator by email and password, under the same lockout as members' logins: counted per
   * address on the operator console (as one source) and per account, in a namespace of its own.
   */
  async verifyOperator(
    email: string,
    password: string,
    from: { ip: string },
    find: (email: string) => Promise<{ id: string; passwordHash: string | null } | undefined>,
  ): Promise<LoginOutcome<string>> {
    const key = `operator:${email.trim().toLowerCase()}`;
    const source = { ip: from.ip, appId: OPERATOR_LOGIN_SOURCE };
    return this.inTurn(key, () =>
      this.verifyInTurn(key, password, source, OPERATOR_PASSWORD_LANE, async () => {
        const found = await find(email.trim());
        return found && { memberId: found.id, passwordHash: found.passwordHash };
      }),
    );
  }

  /** Runs `run` after every earlier attempt on the account in this process has finished. */
  private async inTurn<T>(key: string, run: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(key) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tail = previous.then(() => mine);
    this.turns.set(key, tail);
    await previous;
    try {
      return await run();
    } finally {
      release();
      if (this.turns.get(key) === tail) this.turns.delete(key);
    }
  }

  private async verifyInTurn<Id>(
    key: string,
    password: string,
    from: { ip: string; appId: string },
    lane: string,
    find: () => Promise<{ memberId: Id; passwordHash: string | null } | undefined>,
  ): Promise<LoginOutcome<Id>> {
    const source: LoginSource = { address: loginAddress(from.ip), appId: from.appId };
    // Already made to wait: answered without the password looked at, counting nothing.
    if (await this.logins.waiting(key, source, this.policy.windowSeconds)) return { status: 'locked' };
    const candidate = await find();
    const ok = await verifyPassword(candidate?.passwordHash ?? DECOY_HASH, password, lane);
    if (ok && candidate?.passwordHash) {
      return (await this.settleRight(key, source))
        ? { status: 'ok', memberId: candidate.memberId }
        : { status: 'locked' };
    }
    await this.recordFailure(key, source);
    return { status: 'refused' };
  }

  /**
   * A right password: its source's failures are forgiven, unless failures recorded while it was
   * being checked have made the source wait, or the account when the source has failed on it
   * (as `waiting` judges). Under the account's row lock, like every writer, so no instance races it.
   */
  private async settleRight(key: string, source: LoginSource): Promise<boolean> {
    const { windowSeconds } = this.policy;
    return this.db.transaction().execute(async (trx) => {
      const logins = new LoginRepository(trx);
      const onAccount = await logins.lockAccount(key, windowSeconds);
      const fromSource = await logins.findSource(key, source, windowSeconds);
      const hasFailed = fromSource !== undefined && !fromSource.stale;
      if (fromSource?.waiting || (onAccount.waiting && hasFailed)) return false;
      await logins.forgiveSource(key, source);
      return true;
    });
  }

  /** A wrong password (or account): counted on the account and on its source at once. */
  private async recordFailure(key: string, source: LoginSource): Promise<void> {
    const { windowSeconds } = this.policy;
    await this.db.transaction().execute(async (trx) => {
      const logins = new LoginRepository(trx);
      const accountFailure = next(await logins.lockAccount(key, windowSeconds));
      const sourceFailure = next(await logins.findSource(key, source, windowSeconds));
      await logins.recordAccount(key, accountFailure, accountWait(accountFailure, this.policy.account));
      await logins.recordSource(key, source, sourceFailure, sourceWait(sourceFailure, this.policy.source));
    });
  }

  async purgeStale(): Promise<void> {
    await this.logins.purgeStale(this.policy.windowSeconds);
  }
}
