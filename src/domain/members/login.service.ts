import type { Db } from '../../db/client.js';
import { appTenant, verifyPassword } from '../shared/passwords.js';
import { loginAddress } from './login-source.js';
import { accountKey } from './member-rules.js';
import { LoginRepository, type AttemptCount, type LoginSource } from './login.repository.js';

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
   * `waitSeconds`. Never more: a lock here would let anyone lock anyone out.
   */
  account: { slowFromAttempt: number; waitSeconds: number };
}

/**
 * Per source, attempts 1–2 are free, the 3rd and 4th make it wait 2 s and 4 s, the 5th locks it for
 * 15 minutes. Per account, from the 20th failure from anywhere, one attempt every 5 seconds.
 */
export const LOGIN_LOCKOUT: LockoutPolicy = {
  windowSeconds: 15 * 60,
  source: { slowFromAttempt: 3, slowBaseSeconds: 2, lockAfterAttempts: 5, lockSeconds: 15 * 60 },
  account: { slowFromAttempt: 20, waitSeconds: 5 },
};

/** The wait a source starts after its `attempt`-th counted attempt, or null. */
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

export type LoginOutcome =
  | { status: 'ok'; memberId: number }
  | { status: 'refused' }
  /** Slowed or locked: answered without looking at the password. */
  | { status: 'locked' };

export class LoginService {
  private readonly logins: LoginRepository;

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
   */
  async verify(
    account: string,
    password: string,
    from: { ip: string; appId: string },
  ): Promise<LoginOutcome> {
    const key = accountKey(account);
    const source: LoginSource = { address: loginAddress(from.ip), appId: from.appId };
    if (!(await this.admitAttempt(key, source))) return { status: 'locked' };
    const candidate = await this.logins.findByAccount(key);
    const ok = await verifyPassword(candidate?.passwordHash ?? DECOY_HASH, password, appTenant(from.appId));
    if (!ok || !candidate?.passwordHash) return { status: 'refused' };
    await this.logins.forgive(key, source);
    return { status: 'ok', memberId: candidate.memberId };
  }

  /**
   * Counts the attempt before its password is checked, on the account and on its source at once,
   * so concurrent guesses cannot slip past the count on any instance. False, counting nothing,
   * while either waits or is locked.
   */
  private async admitAttempt(key: string, source: LoginSource): Promise<boolean> {
    const { windowSeconds } = this.policy;
    return this.db.transaction().execute(async (trx) => {
      const logins = new LoginRepository(trx);
      const onAccount = await logins.lockAccount(key, windowSeconds);
      const fromSource = await logins.findSource(key, source, windowSeconds);
      if (onAccount.waiting || fromSource?.waiting) return false;
      const accountAttempt = next(onAccount);
      const sourceAttempt = next(fromSource);
      await logins.recordAccount(key, accountAttempt, accountWait(accountAttempt, this.policy.account));
      await logins.recordSource(key, source, sourceAttempt, sourceWait(sourceAttempt, this.policy.source));
      return true;
    });
  }

  async purgeStale(): Promise<void> {
    await this.logins.purgeStale(this.policy.windowSeconds);
  }
}
