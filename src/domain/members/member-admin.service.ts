import type { Db } from '../../db/client.js';
import { enterpriseTenant, hashPassword } from '../shared/passwords.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import { LoginRepository } from './login.repository.js';
import { MemberAdminRepository, type MemberLimitView } from './member-admin.repository.js';
import { accountKey, checkPassword } from './member-rules.js';
import { MembersRepository } from './members.repository.js';

export interface PasswordSet {
  account: string;
  memberGlobalId: string;
}

/** The operator's side of members: `keyward member set-password`, `enterprise set-member-limit`. */
export class MemberAdminService {
  constructor(private readonly db: Db) {}

  /**
   * Sets a password by the rules of member op 3, revokes the member's tokens and lifts a login
   * lock. Undefined when no live member has the account.
   */
  async setPassword(account: string, password: string): Promise<PasswordSet | undefined> {
    const problem = checkPassword(password);
    if (problem) throw problem.toError(`password: ${problem.message}`);
    const holder = await new MemberAdminRepository(this.db).findByAccount(account);
    if (!holder) return undefined;
    const hash = await hashPassword(password, enterpriseTenant(holder.enterpriseId));
    const updated = await this.db.transaction().execute(async (trx) => {
      if (!(await new MembersRepository(trx).updatePassword(holder.enterpriseId, holder.memberId, hash))) {
        return false;
      }
      await new TokensRepository(trx).revokeForMember(holder.memberId);
      await new LoginRepository(trx).clear(accountKey(holder.account));
      return true;
    });
    return updated ? { account: holder.account, memberGlobalId: holder.memberGlobalId } : undefined;
  }

  /** Caps an enterprise's live members, the administrator included; null lifts the cap. */
  async setMemberLimit(
    enterpriseGlobalId: string,
    limit: number | null,
  ): Promise<MemberLimitView | undefined> {
    return new MemberAdminRepository(this.db).setMemberLimit(enterpriseGlobalId, limit);
  }
}
