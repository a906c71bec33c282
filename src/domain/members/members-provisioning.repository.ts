import type { Db } from '../../db/client.js';

export type MemberIdentity = 'admin' | 'member';

export interface NewMember {
  globalId: string;
  userName: string;
  account: string;
  name: string;
  identity: MemberIdentity;
}

export interface InsertedMember {
  id: number;
  globalId: string;
  userName: string;
}

/** A member as order op 2 lists it. */
export interface ProvisionedMember {
  memberGlobalId: string;
  memberIdentity: MemberIdentity;
}

export interface CloudAccountAsset {
  id: string;
  assetNum: string;
}

/**
 * The members an enterprise gets when the order service creates it: its administrator and, for
 * order op 2, one member per cloud account the customer already holds. Member-center operations
 * live in members.repository.ts.
 */
export class MembersProvisioningRepository {
  constructor(private readonly db: Db) {}

  /** One multi-row insert; members start without a usable password (password_hash null). */
  async insertMany(enterpriseId: number, members: NewMember[]): Promise<InsertedMember[]> {
    if (members.length === 0) return [];
    const rows = await this.db
      .insertInto('members')
      .values(
        members.map((m) => ({
          global_id: m.globalId,
          enterprise_id: enterpriseId,
          user_name: m.userName,
          account: m.account,
          password_hash: null,
          name: m.name,
          identity: m.identity,
          deleted: false,
        })),
      )
      .returning(['id', 'global_id', 'user_name'])
      .execute();
    return rows.map((r) => ({ id: r.id, globalId: r.global_id, userName: r.user_name }));
  }

  /** The customer's active cloud accounts that nobody holds yet, in asset-number order. */
  async unassignedCloudAccountsOf(customerId: string): Promise<CloudAccountAsset[]> {
    const rows = await this.db
      .selectFrom('assets as a')
      .select(['a.id', 'a.asset_num'])
      .where('a.customer_id', '=', customerId)
      .where('a.license_type', '=', 'cloud_account')
      .where('a.revoked', '=', false)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('asset_assignments as aa')
              .select('aa.asset_id')
              .whereRef('aa.asset_id', '=', 'a.id'),
          ),
        ),
      )
      .orderBy('a.asset_num')
      .execute();
    return rows.map((r) => ({ id: r.id, assetNum: r.asset_num }));
  }

  async assign(pairs: Array<{ assetId: string; memberId: number }>): Promise<void> {
    if (pairs.length === 0) return;
    await this.db
      .insertInto('asset_assignments')
      .values(pairs.map((p) => ({ asset_id: p.assetId, member_id: p.memberId })))
      .execute();
  }

  /**
   * Order op 2's `members` for a customer of the enterprise: the administrator, then whoever holds
   * one of the customer's active cloud accounts, in creation order.
   */
  async listForCustomer(enterpriseId: number, customerId: string): Promise<ProvisionedMember[]> {
    const rows = await this.db
      .selectFrom('members as m')
      .select(['m.global_id', 'm.identity'])
      .where('m.enterprise_id', '=', enterpriseId)
      .where('m.deleted', '=', false)
      .where((eb) =>
        eb.or([
          eb('m.identity', '=', 'admin'),
          eb.exists(
            eb
              .selectFrom('asset_assignments as aa')
              .innerJoin('assets as a', 'a.id', 'aa.asset_id')
              .select('aa.asset_id')
              .whereRef('aa.member_id', '=', 'm.id')
              .where('a.customer_id', '=', customerId)
              .where('a.license_type', '=', 'cloud_account')
              .where('a.revoked', '=', false),
          ),
        ]),
      )
      .orderBy((eb) => eb('m.identity', '=', 'admin'), 'desc')
      .orderBy('m.id')
      .execute();
    return rows.map((r) => ({ memberGlobalId: r.global_id, memberIdentity: r.identity }));
  }
}
