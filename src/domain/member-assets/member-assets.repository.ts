import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface EnterpriseAssetItem {
  id: string;
  assetNum: string;
  /** The member it is assigned to (op 6), or the member it is lent to (op 8). */
  memberGlobalId: string | null;
  lent: boolean;
}

export interface OwnedAsset {
  id: string;
  assetNum: string;
  borrowedUsbKey: boolean;
}

export interface ProductRow {
  id: number;
  assetId: string;
  assetNum: string;
  merchandiseInsId: number | null;
  licenseOrderId: string;
  channelOrderId: string | null;
  channelCode: string | null;
  customerId: string;
  licenseType: string;
  crmProductId: string | null;
  productUri: string | null;
  gmsPid: string | null;
  appKey: string | null;
  productName: string | null;
  limitStartTime: number | null;
  limitEndTime: number | null;
  limitConcurrent: number | null;
  limitTimeDuration: number | null;
  limitAmount: number | null;
  trial: number;
  trialEndDate: number | null;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  features: unknown[];
  createdAt: number;
  updatedAt: number;
  /** Shown on a lent lock, moved there by a lending. */
  lentIn: boolean;
}

export interface MerchandiseRow {
  id: number;
  assetId: string;
  parentId: number | null;
  licenseOrderId: string;
  channelOrderId: string | null;
  channelCode: string | null;
  customerId: string;
  licenseType: string;
  merchandiseNum: string | null;
  merchandiseName: string | null;
  parentMerchandiseNum: string | null;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What member op 9 finds for an asset number, whichever enterprise holds it. */
export interface NumberedAsset {
  id: string;
  assetNum: string;
  enterpriseId: number | null;
}

/** `customers c` of the enterprise: the only assets the member center knows. */
const ofEnterprise = (enterpriseId: number) => sql<boolean>`c.enterprise_id = ${enterpriseId}`;

/** The enterprise's assets for member ops 6–9: every query joins through its customers. */
export class MemberAssetsRepository {
  constructor(private readonly db: Db) {}

  async hasCustomers(enterpriseId: number): Promise<boolean> {
    const row = await this.db
      .selectFrom('customers')
      .select('id')
      .where('enterprise_id', '=', enterpriseId)
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Op 6: every live asset, with the member it is assigned to and whether it is lent: an asset
   * whose entitlements are on a lent lock, or a lent lock that holds some (as op 8 says of it).
   */
  async listAssets(enterpriseId: number): Promise<EnterpriseAssetItem[]> {
    const result = await sql<{
      id: string;
      asset_num: string;
      member_global_id: string | null;
      lent: boolean;
    }>`
      select a.id, a.asset_num, m.global_id as member_global_id,
             (exists (select 1 from asset_lendings l where l.asset_id = a.id)
              or exists (select 1 from lent_locks ll where ll.lock_asset_id = a.id)) as lent
        from assets a
        join customers c on c.id = a.customer_id
        left join asset_assignments aa on aa.asset_id = a.id
        left join members m on m.id = aa.member_id and not m.deleted
       where ${ofEnterprise(enterpriseId)} and not a.revoked
       order by a.created_at, a.asset_num
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      assetNum: r.asset_num,
      memberGlobalId: r.member_global_id,
      lent: r.lent,
    }));
  }

  /** Op 8: the live lent locks, with the member each is lent to. */
  async listLentLocks(enterpriseId: number): Promise<EnterpriseAssetItem[]> {
    const result = await sql<{ id: string; asset_num: string; member_global_id: string | null }>`
      select a.id, a.asset_num, m.global_id as member_global_id
        from assets a
        join customers c on c.id = a.customer_id
        left join lent_locks l on l.lock_asset_id = a.id
        left join members m on m.id = l.member_id
       where ${ofEnterprise(enterpriseId)} and not a.revoked and a.borrowed_usb_key
       order by a.created_at, a.asset_num
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      assetNum: r.asset_num,
      memberGlobalId: r.member_global_id,
      lent: r.member_global_id !== null,
    }));
  }

  async findAsset(enterpriseId: number, assetId: string): Promise<OwnedAsset | undefined> {
    const result = await sql<{ id: string; asset_num: string; borrowed_usb_key: boolean }>`
      select a.id, a.asset_num, a.borrowed_usb_key
        from assets a join customers c on c.id = a.customer_id
       where ${ofEnterprise(enterpriseId)} and a.id = ${assetId} and not a.revoked
    `.execute(this.db);
    const row = result.rows[0];
    return row && { id: row.id, assetNum: row.asset_num, borrowedUsbKey: row.borrowed_usb_key };
  }

  /**
   * Op 7: the asset's own live products, and the products lent to it when it is a lent lock. The
   * merchandise they hang in comes from `merchandiseOf`.
   */
  async productsOn(enterpriseId: number, assetId: string): Promise<ProductRow[]> {
    const rows = await this.db
      .selectFrom('product_instances as p')
      .innerJoin('assets as a', 'a.id', 'p.asset_id')
      .innerJoin('customers as c', 'c.id', 'a.customer_id')
      .selectAll('p')
      .select('a.asset_num')
      .where('c.enterprise_id', '=', enterpriseId)
      .where('p.revoked', '=', false)
      .where((eb) =>
        eb.or([
          eb('p.asset_id', '=', assetId),
          eb(
            'p.id',
            'in',
            eb
              .selectFrom('lent_products as lp')
              .innerJoin('asset_lendings as l', 'l.asset_id', 'lp.asset_id')
              .select('lp.product_id')
              .where('l.lock_asset_id', '=', assetId),
          ),
        ]),
      )
      .orderBy('p.id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      assetId: r.asset_id,
      assetNum: r.asset_num,
      merchandiseInsId: r.merchandise_ins_id,
      licenseOrderId: r.license_order_id,
      channelOrderId: r.channel_order_id,
      channelCode: r.channel_code,
      customerId: r.customer_id,
      licenseType: r.license_type,
      crmProductId: r.crm_product_id,
      productUri: r.product_uri,
      gmsPid: r.gms_pid,
      appKey: r.app_key,
      productName: r.product_name,
      limitStartTime: r.limit_start_time,
      limitEndTime: r.limit_end_time,
      limitConcurrent: r.limit_concurrent,
      limitTimeDuration: r.limit_time_duration,
      limitAmount: r.limit_amount,
      trial: r.trial,
      trialEndDate: r.trial_end_date,
      timeDurationExpression: r.time_duration_expression,
      srcLicenseOrderId: r.src_license_order_id,
      features: r.features ?? [],
      createdAt: r.created_at.getTime(),
      updatedAt: r.updated_at.getTime(),
      lentIn: r.asset_id !== assetId,
    }));
  }

  /** Live merchandise of the given assets, in id order (a parent is always older than its children). */
  async merchandiseOf(enterpriseId: number, assetIds: string[]): Promise<MerchandiseRow[]> {
    if (assetIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('merchandise_instances as mi')
      .innerJoin('assets as a', 'a.id', 'mi.asset_id')
      .innerJoin('customers as c', 'c.id', 'a.customer_id')
      .selectAll('mi')
      .where('c.enterprise_id', '=', enterpriseId)
      .where('mi.revoked', '=', false)
      .where('mi.asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .orderBy('mi.id')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      assetId: r.asset_id,
      parentId: r.parent_id,
      licenseOrderId: r.license_order_id,
      channelOrderId: r.channel_order_id,
      channelCode: r.channel_code,
      customerId: r.customer_id,
      licenseType: r.license_type,
      merchandiseNum: r.merchandise_num,
      merchandiseName: r.merchandise_name,
      parentMerchandiseNum: r.parent_merchandise_num,
      timeDurationExpression: r.time_duration_expression,
      srcLicenseOrderId: r.src_license_order_id,
      createdAt: r.created_at.getTime(),
      updatedAt: r.updated_at.getTime(),
    }));
  }

  /** Op 9: the live assets with these numbers, row-locked in number order, whoever holds them. */
  async lockByNums(assetNums: string[]): Promise<NumberedAsset[]> {
    if (assetNums.length === 0) return [];
    const result = await sql<{ id: string; asset_num: string; enterprise_id: number | null }>`
      select a.id, a.asset_num, c.enterprise_id
        from assets a join customers c on c.id = a.customer_id
       where a.asset_num = any(${assetNums}::text[]) and not a.revoked
       order by a.asset_num
         for update of a
    `.execute(this.db);
    return result.rows.map((r) => ({ id: r.id, assetNum: r.asset_num, enterpriseId: r.enterprise_id }));
  }

  /** Op 9: the live members of the enterprise with this global id, row-locked. */
  async lockMembers(enterpriseId: number, globalId: string): Promise<number[]> {
    const rows = await this.db
      .selectFrom('members')
      .select('id')
      .where('enterprise_id', '=', enterpriseId)
      .where('global_id', '=', globalId)
      .where('deleted', '=', false)
      .forUpdate()
      .execute();
    return rows.map((r) => r.id);
  }

  /** Who holds each of the assets, read after they were locked. */
  async assigneesOf(assetIds: string[]): Promise<Map<string, number>> {
    if (assetIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('asset_assignments')
      .select(['asset_id', 'member_id'])
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .execute();
    return new Map(rows.map((r) => [r.asset_id, r.member_id]));
  }

  async unassign(memberId: number, assetIds: string[]): Promise<void> {
    if (assetIds.length === 0) return;
    await this.db
      .deleteFrom('asset_assignments')
      .where('member_id', '=', memberId)
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .execute();
  }

  /** One insert; answers how many rows it added (an asset taken meanwhile adds none). */
  async assign(memberId: number, assetIds: string[]): Promise<number> {
    if (assetIds.length === 0) return 0;
    const result = await sql<{ asset_id: string }>`
      insert into asset_assignments (asset_id, member_id)
      select unnest(${assetIds}::text[]), ${memberId}::bigint
      on conflict (asset_id) do nothing
      returning asset_id
    `.execute(this.db);
    return result.rows.length;
  }
}
