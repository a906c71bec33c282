import type { Db } from '../../db/client.js';
import { verifyPassword } from '../shared/passwords.js';
import { LoginRepository } from './login.repository.js';

// Verified against this when the account does not exist, so timing does not tell accounts apart.
const DECOY_HASH =
  '$argon2id$v=19$m=19456,t=2,p=1$c29tZXNhbHRzb21lc2FsdA$0m3vDL2yJ2bPQ3SxgB4c0o6b6mC8nYq1m2Hk8Zp0x1E';

export class LoginService {
  private readonly logins: LoginRepository;

  constructor(db: Db) {
    this.logins = new LoginRepository(db);
  }

  /** The member behind a full account and password, or undefined: one answer for every miss. */
  async verify(account: string, password: string): Promise<number | undefined> {
    const candidate = await this.logins.findByAccount(account);
    const ok = await verifyPassword(candidate?.passwordHash ?? DECOY_HASH, password);
    return ok && candidate?.passwordHash ? candidate.memberId : undefined;
  }
}
