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

  /** The new limit, with the one it replaced: read and written in one statement. */
  async setMemberLimit(
    enterpriseGlobalId: string,
    limit: number | null,
  ): Promise<(MemberLimitView & { enterpriseId: number; previousLimit: number | null }) | undefined> {
    const result = await sql<{
      id: number;
      global_id: string;
      member_limit: number | null;
      member_count: number;
      previous_limit: number | null;
    }>`
      with old as (select id, member_limit from enterprises where global_id = ${enterpriseGlobalId} for update)
      update enterprises e set member_limit = ${limit}::integer, updated_at = now()
        from old
       where e.id = old.id
      returning e.id, e.global_id, e.member_limit, e.member_count, old.member_limit as previous_limit
    `.execute(this.db);
    const row = result.rows[0];
    return (
      row && {
        enterpriseId: row.id,
        enterpriseGlobalId: row.global_id,
        memberLimit: row.member_limit,
        memberCount: row.member_count,
        previousLimit: row.previous_limit,
      }
    );
  }
}
