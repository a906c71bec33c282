import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { jsonbText } from '../../db/json.js';

export interface NewAsset {
  id: string;
  assetNum: string;
  limitStartTime: number | null;
  limitEndTime: number | null;
  borrowedUsbKey: boolean | null;
  transferedAssetNum: boolean | null;
}

/** A new asset row with the customer and license type of the order it belongs to. */
export interface OwnedNewAsset extends NewAsset {
  customerId: string;
  licenseType: string;
}

export interface LockedAsset {
  id: string;
  assetNum: string;
  customerId: string;
  /** The channel of the asset's customer: whose the asset is. */
  channelCode: string | null;
  licenseType: string;
  revoked: boolean;
}

/** Which license order an instance row belongs to: the orders of one run differ in these. */
export interface InstanceOrder {
  licenseOrderId: string;
  customerId: string;
  licenseType: string;
}

export interface NewMerchandise extends InstanceOrder {
  id: number;
  assetId: string;
  parentId: number | null;
  crmProductId: string | null;
  parentCrmProductId: string | null;
  merchandiseNum: string | null;
  merchandiseName: string | null;
  parentMerchandiseNum: string | null;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
}

export interface NewProduct extends InstanceOrder {
  assetId: string;
  merchandiseInsId: number | null;
  crmProductId: string | null;
  parentCrmProductId: string | null;
  productUri: string | null;
  gmsPid: string | null;
  appKey: string | null;
  productName: string | null;
  productType: string | null;
  limitStartTime: number | null;
  limitEndTime: number | null;
  limitConcurrent: number | null;
  limitTimeDuration: number | null;
  limitAmount: number | null;
  trial: number;
  trialEndDate: number | null;
  timeUnit: string | null;
  timeUnitQuantity: number | null;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  passwords: string[];
  features: unknown[];
}

/** What every instance row of one batch shares. */
export interface InstanceOwner {
  channelOrderId: string;
  channelCode: string;
}

export interface ActiveProduct {
  id: number;
  assetId: string;
  crmProductId: string | null;
  productUri: string | null;
  limitStartTime: number | null;
  limitEndTime: number | null;
  limitConcurrent: number | null;
}

const column = <T, K>(rows: T[], pick: (row: T) => K): K[] => rows.map(pick);

/**
 * Rows one write statement carries. A statement on the embedded database cannot be interrupted and
 * blocks the server's thread while it runs; cut at this size, each takes a fraction of a second
 * there, and a call out of time stops at the next statement (TRANSACTION_LIMIT_MS).
 */
export const ROWS_PER_STATEMENT = 2000;

function chunksOf<T>(rows: T[]): T[][] {
  const chunks: T[][] = [];
  for (let at = 0; at < rows.length; at += ROWS_PER_STATEMENT) {
    chunks.push(rows.slice(at, at + ROWS_PER_STATEMENT));
  }
  return chunks;
}

/**
 * The asset rows license orders write: assets, extensions, merchandise trees and product
 * instances. Each write is one statement per ROWS_PER_STATEMENT rows of a run of orders (unnest of
 * column arrays keeps the parameter count fixed however many rows there are).
 */
export class OrderAssetsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Inserts the numbers nobody holds yet, each for its own order's customer and license type;
   * returns those it inserted. Concurrent inserts of a number wait for each other.
   */
  async insertIfAbsent(rows: OwnedNewAsset[]): Promise<string[]> {
    const inserted: string[] = [];
    for (const assets of chunksOf(rows)) {
      const result = await sql<{ asset_num: string }>`
      insert into assets (id, asset_num, license_type, customer_id, limit_start_time, limit_end_time,
                          borrowed_usb_key, transfered_asset_num)
      select v.id, v.asset_num, v.license_type, v.customer_id, v.ls, v.le,
             coalesce(v.borrowed, false), coalesce(v.transfered, false)
        from unnest(${column(assets, (a) => a.id)}::text[], ${column(assets, (a) => a.assetNum)}::text[],
                    ${column(assets, (a) => a.licenseType)}::text[], ${column(assets, (a) => a.customerId)}::text[],
                    ${column(assets, (a) => a.limitStartTime)}::bigint[],
                    ${column(assets, (a) => a.limitEndTime)}::bigint[],
                    ${column(assets, (a) => a.borrowedUsbKey)}::boolean[],
                    ${column(assets, (a) => a.transferedAssetNum)}::boolean[])
             as v(id, asset_num, license_type, customer_id, ls, le, borrowed, transfered)
      on conflict (asset_num) do nothing
      returning asset_num
    `.execute(this.db);
      inserted.push(...result.rows.map((r) => r.asset_num));
    }
    return inserted;
  }

  /**
   * Reads and row-locks assets by number, so two orders on one asset take turns; always in number
   * order, so two batches locking overlapping sets cannot deadlock.
   */
  async lockByNums(assetNums: string[]): Promise<LockedAsset[]> {
    if (assetNums.length === 0) return [];
    const rows = await this.db
      .selectFrom('assets')
      .innerJoin('customers', 'customers.id', 'assets.customer_id')
      .select([
        'assets.id',
        'assets.asset_num',
        'assets.customer_id',
        'customers.channel_code',
        'assets.license_type',
        'assets.revoked',
      ])
      .where('assets.asset_num', '=', sql<string>`any(${assetNums}::text[])`)
      .orderBy('assets.asset_num')
      .forUpdate('assets')
      .execute();
    return rows.map((r) => ({
      id: r.id,
      assetNum: r.asset_num,
      customerId: r.customer_id,
      channelCode: r.channel_code,
      licenseType: r.license_type,
      revoked: r.revoked,
    }));
  }

  /** A new purchase on assets the customer holds: given limits and flags replace, revoked ones return. */
  async refresh(all: Array<Omit<NewAsset, 'assetNum'>>): Promise<void> {
    for (const assets of chunksOf(all)) {
      await sql`
      update assets a
         set revoked = false,
             limit_start_time = coalesce(v.ls, a.limit_start_time),
             limit_end_time = coalesce(v.le, a.limit_end_time),
             borrowed_usb_key = coalesce(v.borrowed, a.borrowed_usb_key),
             transfered_asset_num = coalesce(v.transfered, a.transfered_asset_num),
             updated_at = now()
        from unnest(${column(assets, (a) => a.id)}::text[],
                    ${column(assets, (a) => a.limitStartTime)}::bigint[],
                    ${column(assets, (a) => a.limitEndTime)}::bigint[],
                    ${column(assets, (a) => a.borrowedUsbKey)}::boolean[],
                    ${column(assets, (a) => a.transferedAssetNum)}::boolean[])
             as v(id, ls, le, borrowed, transfered)
       where a.id = v.id
    `.execute(this.db);
    }
  }

  async upsertExtends(
    all: Array<{ assetId: string; extendCode: string; extendValue: string | null }>,
  ): Promise<void> {
    for (const rows of chunksOf(all)) {
      await sql`
      insert into asset_extends (asset_id, extend_code, extend_value)
      select * from unnest(${column(rows, (r) => r.assetId)}::text[], ${column(rows, (r) => r.extendCode)}::text[],
                           ${column(rows, (r) => r.extendValue)}::text[])
      on conflict (asset_id, extend_code) do update set extend_value = excluded.extend_value
    `.execute(this.db);
    }
  }

  /** Ids for a whole forest drawn before it is written, so a child's row can name its parent. */
  async allocateMerchandiseIds(count: number): Promise<number[]> {
    const ids: number[] = [];
    for (let left = count; left > 0; left -= ROWS_PER_STATEMENT) {
      const result = await sql<{ id: number }>`
        select nextval(pg_get_serial_sequence('merchandise_instances', 'id'))::bigint as id
          from generate_series(1, ${Math.min(left, ROWS_PER_STATEMENT)}::int)
      `.execute(this.db);
      ids.push(...result.rows.map((r) => Number(r.id)));
    }
    return ids;
  }

  async insertMerchandise(all: NewMerchandise[], owner: InstanceOwner): Promise<void> {
    for (const rows of chunksOf(all)) {
      await sql`
      insert into merchandise_instances (id, asset_id, parent_id, license_order_id, channel_order_id, channel_code,
        customer_id, license_type, crm_product_id, parent_crm_product_id, merchandise_num, merchandise_name,
        parent_merchandise_num, time_duration_expression, src_license_order_id)
      select v.id, v.asset_id, v.parent_id, v.license_order_id, ${owner.channelOrderId}, ${owner.channelCode},
             v.customer_id, v.license_type, v.crm, v.parent_crm, v.num, v.name, v.parent_num, v.expr, v.src
        from unnest(${column(rows, (r) => r.id)}::bigint[], ${column(rows, (r) => r.assetId)}::text[],
                    ${column(rows, (r) => r.licenseOrderId)}::text[], ${column(rows, (r) => r.customerId)}::text[],
                    ${column(rows, (r) => r.licenseType)}::text[],
                    ${column(rows, (r) => r.parentId)}::bigint[], ${column(rows, (r) => r.crmProductId)}::text[],
                    ${column(rows, (r) => r.parentCrmProductId)}::text[],
                    ${column(rows, (r) => r.merchandiseNum)}::text[],
                    ${column(rows, (r) => r.merchandiseName)}::text[],
                    ${column(rows, (r) => r.parentMerchandiseNum)}::text[],
                    ${column(rows, (r) => r.timeDurationExpression)}::text[],
                    ${column(rows, (r) => r.srcLicenseOrderId)}::text[])
             as v(id, asset_id, license_order_id, customer_id, license_type, parent_id, crm, parent_crm, num, name,
                  parent_num, expr, src)
    `.execute(this.db);
    }
  }

  async insertProducts(all: NewProduct[], owner: InstanceOwner): Promise<void> {
    for (const rows of chunksOf(all)) {
      await sql`
      insert into product_instances (asset_id, merchandise_ins_id, license_order_id, channel_order_id, channel_code,
        customer_id, license_type, crm_product_id, parent_crm_product_id, product_uri, gms_pid, app_key,
        product_name, product_type, limit_start_time, limit_end_time, limit_concurrent, limit_time_duration,
        limit_amount, trial, trial_end_date, time_unit, time_unit_quantity, time_duration_expression, src_license_order_id,
        passwords, features)
      select v.asset_id, v.merchandise_ins_id, v.license_order_id, ${owner.channelOrderId}, ${owner.channelCode},
             v.customer_id, v.license_type, v.crm, v.parent_crm, v.uri, v.gms_pid, v.app_key,
             v.name, v.type, v.ls, v.le, v.concurrent, v.duration,
             v.amount, v.trial, v.trial_end, v.time_unit, v.time_unit_quantity, v.expr, v.src, v.passwords, v.features
        from unnest(${column(rows, (r) => r.assetId)}::text[], ${column(rows, (r) => r.merchandiseInsId)}::bigint[],
                    ${column(rows, (r) => r.licenseOrderId)}::text[], ${column(rows, (r) => r.customerId)}::text[],
                    ${column(rows, (r) => r.licenseType)}::text[], ${column(rows, (r) => r.crmProductId)}::text[], ${column(rows, (r) => r.parentCrmProductId)}::text[],
                    ${column(rows, (r) => r.productUri)}::text[], ${column(rows, (r) => r.gmsPid)}::text[],
                    ${column(rows, (r) => r.appKey)}::text[], ${column(rows, (r) => r.productName)}::text[],
                    ${column(rows, (r) => r.productType)}::text[], ${column(rows, (r) => r.limitStartTime)}::bigint[],
                    ${column(rows, (r) => r.limitEndTime)}::bigint[], ${column(rows, (r) => r.limitConcurrent)}::int[],
                    ${column(rows, (r) => r.limitTimeDuration)}::bigint[], ${column(rows, (r) => r.limitAmount)}::int[],
                    ${column(rows, (r) => r.trial)}::smallint[],
                    ${column(rows, (r) => r.trialEndDate)}::bigint[], ${column(rows, (r) => r.timeUnit)}::text[],
                    ${column(rows, (r) => r.timeUnitQuantity)}::int[],
                    ${column(rows, (r) => r.timeDurationExpression)}::text[],
                    ${column(rows, (r) => r.srcLicenseOrderId)}::text[],
                    ${column(rows, (r) => jsonbText(r.passwords))}::jsonb[],
                    ${column(rows, (r) => jsonbText(r.features))}::jsonb[])
             as v(asset_id, merchandise_ins_id, license_order_id, customer_id, license_type, crm, parent_crm, uri,
                  gms_pid, app_key, name, type, ls, le,
                  concurrent, duration, amount, trial, trial_end, time_unit, time_unit_quantity, expr, src, passwords, features)
    `.execute(this.db);
    }
  }

  /** The assets among `assetIds` that hold a product or merchandise of the license order. */
  async holdingOrder(assetIds: string[], licenseOrderId: string): Promise<Set<string>> {
    if (assetIds.length === 0) return new Set();
    const result = await sql<{ asset_id: string }>`
      select asset_id from product_instances
       where license_order_id = ${licenseOrderId} and asset_id = any(${assetIds}::text[])
      union
      select asset_id from merchandise_instances
       where license_order_id = ${licenseOrderId} and asset_id = any(${assetIds}::text[])
    `.execute(this.db);
    return new Set(result.rows.map((r) => r.asset_id));
  }

  /** delete_asset: the assets and everything on them leave every listing; assignments end. */
  async revokeAssets(assetIds: string[]): Promise<void> {
    if (assetIds.length === 0) return;
    const ids = sql`any(${assetIds}::text[])`;
    await sql`update product_instances set revoked = true, updated_at = now()
               where asset_id = ${ids} and not revoked`.execute(this.db);
    await sql`update merchandise_instances set revoked = true, updated_at = now()
               where asset_id = ${ids} and not revoked`.execute(this.db);
    await sql`delete from asset_assignments where asset_id = ${ids}`.execute(this.db);
    await sql`update assets set revoked = true, updated_at = now() where id = ${ids}`.execute(this.db);
  }

  /** The customer's live product instances on these assets, locked; only one order's when given. */
  async lockActiveProducts(
    assetIds: string[],
    customerId: string,
    licenseOrderId: string | null,
  ): Promise<ActiveProduct[]> {
    if (assetIds.length === 0) return [];
    let query = this.db
      .selectFrom('product_instances')
      .select([
        'id',
        'asset_id',
        'crm_product_id',
        'product_uri',
        'limit_start_time',
        'limit_end_time',
        'limit_concurrent',
      ])
      .where('asset_id', '=', sql<string>`any(${assetIds}::text[])`)
      .where('customer_id', '=', customerId)
      .where('revoked', '=', false);
    if (licenseOrderId !== null) query = query.where('license_order_id', '=', licenseOrderId);
    const rows = await query.forUpdate().execute();
    return rows.map((r) => ({
      id: r.id,
      assetId: r.asset_id,
      crmProductId: r.crm_product_id,
      productUri: r.product_uri,
      limitStartTime: r.limit_start_time,
      limitEndTime: r.limit_end_time,
      limitConcurrent: r.limit_concurrent,
    }));
  }

  async revokeProducts(ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await sql`update product_instances set revoked = true, updated_at = now()
               where id = any(${ids}::bigint[])`.execute(this.db);
  }
}
