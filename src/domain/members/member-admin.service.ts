import type { Db } from '../../db/client.js';
import { NO_REQUEST, operatorActor, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { enterpriseTenant, hashPassword } from '../shared/passwords.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import { LoginRepository } from './login.repository.js';
import { MemberAdminRepository, type MemberLimitView } from './member-admin.repository.js';
import { memberChange } from './member-audit.js';
import { accountKey, checkPassword } from './member-rules.js';
import { MembersRepository } from './members.repository.js';

export interface PasswordSet {
  account: string;
  memberGlobalId: string;
}

/**
 * The operator's side of members: `keyward member set-password`, `enterprise set-member-limit`.
 * Each change is audited in its transaction; `request` names the admin-API call that asked for it.
 */
export class MemberAdminService {
  constructor(private readonly db: Db) {}

  /**
   * Sets a password by the rules of member op 3, revokes the member's tokens and lifts a login
   * lock. Undefined when no live member has the account.
   */
  async setPassword(
    account: string,
    password: string,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<PasswordSet | undefined> {
    const problem = checkPassword(password);
    // The admin API answers with the message alone: it names the field, as its other refusals do.
    if (problem) throw new KeywardError(problem.code, `password: ${problem.message}`);
    const holder = await new MemberAdminRepository(this.db).findByAccount(account);
    if (!holder) return undefined;
    const hash = await hashPassword(password, enterpriseTenant(holder.enterpriseId));
    const updated = await this.db.transaction().execute(async (trx) => {
      if (!(await new MembersRepository(trx).updatePassword(holder.enterpriseId, holder.memberId, hash))) {
        return false;
      }
      await new TokensRepository(trx).revokeForMember(holder.memberId);
      await new LoginRepository(trx).clear(accountKey(holder.account));
      const member = {
        globalId: holder.memberGlobalId,
        account: holder.account,
        enterpriseId: holder.enterpriseId,
      };
      await new AuditRepository(trx).record(operatorActor(request), [
        memberChange('member.password_set', member, { tokensRevoked: true }),
      ]);
      return true;
    });
    return updated ? { account: holder.account, memberGlobalId: holder.memberGlobalId } : undefined;
  }

  /** Caps an enterprise's live members, the administrator included; null lifts the cap. */
  async setMemberLimit(
    enterpriseGlobalId: string,
    limit: number | null,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<MemberLimitView | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const set = await new MemberAdminRepository(trx).setMemberLimit(enterpriseGlobalId, limit);
      if (!set) return undefined;
      const { enterpriseId, previousLimit, ...view } = set;
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'enterprise.member_limit_set',
          subject: enterpriseGlobalId,
          enterprise: { id: enterpriseId },
          detail: { memberLimit: limit, previousLimit },
        },
      ]);
      return view;
    });
  }
}
