import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface AccountHolder {
  memberId: number;
  memberGlobalId: string;
  enterpriseId: number;
  account: string;
}

export interface MemberLimitView {
  enterpriseGlobalId: string;
  memberLimit: number | null;
  memberCount: number;
}

/**
 * What the operator does through the admin API. The operator stands above every tenant, so these
 * look members and enterprises up by their global names; the member center never calls them.
 */
export class MemberAdminRepository {
  constructor(private readonly db: Db) {}

  async findByAccount(account: string): Promise<AccountHolder | undefined> {
    const row = await this.db
      .selectFrom('members')
      .select(['id', 'global_id', 'enterprise_id', 'account'])
      .where(sql<string>`lower(account)`, '=', account.toLowerCase())
      .where('deleted', '=', false)
      .executeTakeFirst();
    return (
      row && {
        memberId: row.id,
        memberGlobalId: row.global_id,
        enterpriseId: row.enterprise_id,
        account: row.account,
      }
    );
  }

  async setMemberLimit(
    enterpriseGlobalId: string,
    limit: number | null,
  ): Promise<MemberLimitView | undefined> {
    const row = await this.db
      .updateTable('enterprises')
      .set({ member_limit: limit, updated_at: new Date() })
      .where('global_id', '=', enterpriseGlobalId)
      .returning(['global_id', 'member_limit', 'member_count'])
      .executeTakeFirst();
    return (
      row && {
        enterpriseGlobalId: row.global_id,
        memberLimit: row.member_limit,
        memberCount: row.member_count,
      }
    );
  }
}
