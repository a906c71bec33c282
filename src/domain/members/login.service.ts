import type { Db } from '../../db/client.js';
import { appTenant, verifyPassword } from '../shared/passwords.js';
import { accountKey } from './member-rules.js';
import { LoginRepository, type LockoutPolicy } from './login.repository.js';

// Verified against this when the account does not exist, so timing does not tell accounts apart.
const DECOY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$0m3vDL2yJ2bPQ3SxgB4c0o6b6mC8nYq1m2Hk8Zp0x1E';

/**
 * Attempts 1–2 are free; after the 3rd and 4th the account waits 2 s and 4 s; the 5th locks it
 * for 15 minutes. Attempts more than 15 minutes apart start over. README "Member logins".
 */
export const LOGIN_LOCKOUT: LockoutPolicy = {
  slowFromAttempt: 3,
  slowBaseSeconds: 2,
  lockAfterAttempts: 5,
  lockSeconds: 15 * 60,
  windowSeconds: 15 * 60,
};

export type LoginOutcome =
  | { status: 'ok'; memberId: number }
  | { status: 'refused' }
  /** Slowed or locked: answered without looking at the password. */
  | { status: 'locked' };

export class LoginService {
  private readonly logins: LoginRepository;

  constructor(
    db: Db,
    private readonly policy: LockoutPolicy = LOGIN_LOCKOUT,
  ) {
    this.logins = new LoginRepository(db);
  }

  /**
   * The member behind a full account and password, asked for by the application `appId`. Unknown
   * accounts are counted and locked like real ones, so neither the answer nor its speed tells which
   * accounts exist.
   */
  async verify(account: string, password: string, appId: string): Promise<LoginOutcome> {
    const key = accountKey(account);
    if (!(await this.logins.admitAttempt(key, this.policy))) return { status: 'locked' };
    const candidate = await this.logins.findByAccount(key);
    const ok = await verifyPassword(candidate?.passwordHash ?? DECOY_HASH, password, appTenant(appId));
    if (!ok || !candidate?.passwordHash) return { status: 'refused' };
    await this.logins.clear(key);
    return { status: 'ok', memberId: candidate.memberId };
  }

  async purgeStale(): Promise<void> {
    await this.logins.purgeStale(this.policy);
  }
}
