import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import type { LeaseListing } from '../runtime/runtime.repository.js';

/** A license as the operator reads it: a product on an asset, with its seats in use now. */
export interface LicenseView {
  productId: number;
  assetNum: string;
  licenseType: string;
  crmProductId: string | null;
  productUri: string | null;
  productName: string | null;
  /** limitConcurrent: the seats licensed; null when the license does not count them. */
  seatsLicensed: number | null;
  /** Machines holding a seat now, as check-out counts them. */
  seatsUsed: number;
  /** The later of the asset's and the product's start, ms since the epoch. */
  startsAt: number | null;
  /** The earlier of the asset's and the product's end, ms since the epoch. */
  endsAt: number | null;
}

/** An asset (a lock, a certificate, a cloud account) with its owner and its licenses. */
export interface AssetView {
  assetId: string;
  assetNum: string;
  licenseType: string;
  locked: boolean;
  freezing: boolean;
  revoked: boolean;
  startsAt: number | null;
  endsAt: number | null;
  createdAt: Date;
  customerName: string | null;
  channelCode: string | null;
  enterpriseGlobalId: string | null;
  enterpriseName: string | null;
  /** Employees it is assigned to (account and global id), at most a page's worth. */
  assignedTo: Array<{ account: string; globalId: string }>;
  licenses: LicenseView[];
}

/** One lease, every field: the Leases table's row and what it folds away. */
export interface LeaseView extends LeaseListing {
  appName: string;
  productId: number;
  memberGlobalId: string | null;
  enterpriseGlobalId: string | null;
  enterpriseName: string | null;
  pool: 'own' | 'lent';
  seatHeldUntil: Date | null;
}

/** An employee as the operator reads them: whose they are, what they hold and run. */
export interface MemberView {
  globalId: string;
  account: string;
  userName: string;
  name: string | null;
  identity: 'admin' | 'member';
  departmentName: string | null;
  deleted: boolean;
  createdAt: Date;
  enterpriseGlobalId: string;
  enterpriseName: string;
  assets: Array<{ assetNum: string; licenseType: string }>;
}

/** A lease's one-line listing, as on an asset's or a member's page. */
export interface MachineRow {
  leaseId: string;
  holder: string;
  fingerprint: string;
  offline: boolean;
  productName: string | null;
  crmProductId: string | null;
  createdAt: Date;
  heartbeatAt: Date;
  expiresAt: Date;
  endedAt: Date | null;
  /** Holding a seat now: live, or checked in offline and still holding its seat. */
  holding: boolean;
}

/** Where a page of an enterprise's licenses starts: after this asset number and product. */
export type LicenseCursor = readonly [assetNum: string, productId: number];

/**
 * Machines holding a seat of a product now, as check-out counts them: live leases, and checked-in
 * offline leases still holding theirs. A read of the product's seat indexes.
 */
export const seatsUsedOf = (productId: RawBuilder<unknown>, now: Date) => sql<number>`
  (select count(*)::int from (
     select holder_key, fingerprint from runtime_leases l
      where l.product_id = ${productId} and l.ended_at is null and l.expires_at > ${now}
     union
     select holder_key, fingerprint from runtime_leases l
      where l.product_id = ${productId} and l.seat_held_until > ${now}) seats)`;

const holdingNow = (now: Date) =>
  sql<boolean>`((l.ended_at is null and l.expires_at > ${now}) or coalesce(l.seat_held_until > ${now}, false))`;

interface LicenseRow {
  product_id: number | string;
  asset_num: string;
  license_type: string;
  crm_product_id: string | null;
  product_uri: string | null;
  product_name: string | null;
  limit_concurrent: number | null;
  seats_used: number;
  starts_at: number | string | null;
  ends_at: number | string | null;
}

const numberOrNull = (value: number | string | null): number | null =>
  value === null ? null : Number(value);

function licenseOf(r: LicenseRow): LicenseView {
  return {
    productId: Number(r.product_id),
    assetNum: r.asset_num,
    licenseType: r.license_type,
    crmProductId: r.crm_product_id,
    productUri: r.product_uri,
    productName: r.product_name,
    seatsLicensed: r.limit_concurrent,
    seatsUsed: r.seats_used,
    startsAt: numberOrNull(r.starts_at),
    endsAt: numberOrNull(r.ends_at),
  };
}

const licenseColumns = (now: Date) => sql`
  p.id as product_id, a.asset_num, a.license_type, p.crm_product_id, p.product_uri, p.product_name,
  p.limit_concurrent, ${seatsUsedOf(sql`p.id`, now)} as seats_used,
  greatest(a.limit_start_time, p.limit_start_time) as starts_at,
  least(a.limit_end_time, p.limit_end_time) as ends_at`;

interface MachineSqlRow {
  lease_id: string;
  holder: string;
  fingerprint: string;
  offline: boolean;
  product_name: string | null;
  crm_product_id: string | null;
  created_at: Date;
  heartbeat_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  holding: boolean;
}

const machineOf = (r: MachineSqlRow): MachineRow => ({
  leaseId: r.lease_id,
  holder: r.holder,
  fingerprint: r.fingerprint,
  offline: r.offline,
  productName: r.product_name,
  crmProductId: r.crm_product_id,
  createdAt: r.created_at,
  heartbeatAt: r.heartbeat_at,
  expiresAt: r.expires_at,
  endedAt: r.ended_at,
  holding: r.holding,
});

const machineColumns = (now: Date) => sql`
  l.id as lease_id, coalesce(m.account, h.asset_num, l.holder_key) as holder, l.fingerprint, l.offline,
  p.product_name, p.crm_product_id, l.created_at, l.heartbeat_at, l.expires_at, l.ended_at,
  ${holdingNow(now)} as holding`;

/**
 * The operator console's drill-down: an enterprise's licenses and machines, an asset, a lease, an
 * employee. Every read starts from one row found by a unique index and walks the indexes under it,
 * so a page costs what it shows, not what the platform holds.
 */
export class LicenseViewsRepository {
  constructor(private readonly db: Db) {}

  /** A page of an enterprise's live licenses, by asset number, after `after`. */
  async enterpriseLicenses(query: {
    enterpriseGlobalId: string;
    now: Date;
    after?: LicenseCursor;
    limit: number;
  }): Promise<LicenseView[]> {
    const after =
      query.after === undefined
        ? sql``
        : sql`and (a.asset_num, p.id) > (${query.after[0]}, ${query.after[1]}::bigint)`;
    const result = await sql<LicenseRow>`
      select ${licenseColumns(query.now)}
        from enterprises e
        join customers c on c.enterprise_id = e.id
        join assets a on a.customer_id = c.id and not a.revoked
        join product_instances p on p.asset_id = a.id and not p.revoked
       where e.global_id = ${query.enterpriseGlobalId} ${after}
       order by a.asset_num, p.id
       limit ${query.limit}
    `.execute(this.db);
    return result.rows.map(licenseOf);
  }

  /** How many live licenses and assets an enterprise has. */
  async enterpriseTotals(enterpriseGlobalId: string): Promise<{ licenses: number; assets: number }> {
    const result = await sql<{ licenses: number; assets: number }>`
      select count(p.id)::int as licenses, count(distinct a.id)::int as assets
        from enterprises e
        join customers c on c.enterprise_id = e.id
        join assets a on a.customer_id = c.id and not a.revoked
        left join product_instances p on p.asset_id = a.id and not p.revoked
       where e.global_id = ${enterpriseGlobalId}
    `.execute(this.db);
    return result.rows[0] ?? { licenses: 0, assets: 0 };
  }

  /** Machines holding a seat of the enterprise's licenses now: online and offline apart. */
  async enterpriseMachines(
    enterpriseGlobalId: string,
    now: Date,
  ): Promise<{ online: number; offline: number }> {
    const products = sql`
      select p.id from enterprises e
        join customers c on c.enterprise_id = e.id
        join product_instances p on p.customer_id = c.id and not p.revoked
       where e.global_id = ${enterpriseGlobalId}`;
    // Two reads by the runtime's own seat indexes, as check-out counts seats.
    const result = await sql<{ online: number; offline: number }>`
      select count(*) filter (where not s.offline)::int as online,
             count(*) filter (where s.offline)::int as offline
        from (
          select l.product_id, l.holder_key, l.fingerprint, l.offline from runtime_leases l
           where l.product_id in (${products}) and l.ended_at is null and l.expires_at > ${now}
          union
          select l.product_id, l.holder_key, l.fingerprint, l.offline from runtime_leases l
           where l.product_id in (${products}) and l.seat_held_until > ${now}) s
    `.execute(this.db);
    return result.rows[0] ?? { online: 0, offline: 0 };
  }

  /** The assets a batch's license orders put products or merchandise on, by asset number. */
  async assetsOfBatch(batchId: string, limit: number): Promise<string[]> {
    const result = await sql<{ asset_num: string }>`
      select distinct a.asset_num
        from license_orders o
        join product_instances p on p.license_order_id = o.id
        join assets a on a.id = p.asset_id
       where o.batch_id = ${batchId}
       order by a.asset_num
       limit ${limit}
    `.execute(this.db);
    return result.rows.map((r) => r.asset_num);
  }

  /** An asset by its number, with its owner, assignments and licenses; revoked ones too. */
  async asset(assetNum: string, now: Date): Promise<AssetView | undefined> {
    const found = await sql<{
      id: string;
      asset_num: string;
      license_type: string;
      locked: boolean;
      freezing: boolean;
      revoked: boolean;
      limit_start_time: number | string | null;
      limit_end_time: number | string | null;
      created_at: Date;
      customer_name: string | null;
      channel_code: string | null;
      enterprise_global_id: string | null;
      enterprise_name: string | null;
    }>`
      select a.id, a.asset_num, a.license_type, a.locked, a.freezing, a.revoked, a.limit_start_time,
             a.limit_end_time, a.created_at, c.name as customer_name, c.channel_code,
             e.global_id as enterprise_global_id, e.name as enterprise_name
        from assets a
        join customers c on c.id = a.customer_id
        left join enterprises e on e.id = c.enterprise_id
       where a.asset_num = ${assetNum}
    `.execute(this.db);
    const a = found.rows[0];
    if (a === undefined) return undefined;
    const [licenses, assigned] = await Promise.all([
      sql<LicenseRow>`
        select ${licenseColumns(now)}
          from assets a join product_instances p on p.asset_id = a.id and not p.revoked
         where a.id = ${a.id}
         order by p.id
         limit 200`.execute(this.db),
      sql<{ account: string; global_id: string }>`
        select m.account, m.global_id
          from asset_assignments s join members m on m.id = s.member_id and not m.deleted
         where s.asset_id = ${a.id}
         order by m.account
         limit 50`.execute(this.db),
    ]);
    return {
      assetId: a.id,
      assetNum: a.asset_num,
      licenseType: a.license_type,
      locked: a.locked,
      freezing: a.freezing,
      revoked: a.revoked,
      startsAt: numberOrNull(a.limit_start_time),
      endsAt: numberOrNull(a.limit_end_time),
      createdAt: a.created_at,
      customerName: a.customer_name,
      channelCode: a.channel_code,
      enterpriseGlobalId: a.enterprise_global_id,
      enterpriseName: a.enterprise_name,
      assignedTo: assigned.rows.map((r) => ({ account: r.account, globalId: r.global_id })),
      licenses: licenses.rows.map(licenseOf),
    };
  }

  /** The machines that ran an asset's licenses, those holding a seat first, then the newest. */
  async assetMachines(assetId: string, now: Date, limit: number): Promise<MachineRow[]> {
    return this.machines(
      sql`l.product_id in (select p.id from product_instances p where p.asset_id = ${assetId})`,
      now,
      limit,
    );
  }

  /** One lease, every field, with the enterprise and the employee it belongs to. */
  async lease(leaseId: string): Promise<LeaseView | undefined> {
    const result = await sql<{
      id: string;
      app_key: string;
      app_name: string;
      asset_num: string;
      product_id: number | string;
      crm_product_id: string | null;
      product_uri: string | null;
      product_name: string | null;
      holder_kind: 'member' | 'lock';
      holder: string;
      member_global_id: string | null;
      enterprise_global_id: string | null;
      enterprise_name: string | null;
      pool: 'own' | 'lent';
      fingerprint: string;
      offline: boolean;
      created_at: Date;
      heartbeat_at: Date;
      expires_at: Date;
      ended_at: Date | null;
      end_reason: string | null;
      used_ms: number | string;
      seat_held_until: Date | null;
    }>`
      select l.id, ap.app_key, ap.name as app_name, a.asset_num, l.product_id, p.crm_product_id,
             p.product_uri, p.product_name, l.holder_kind, coalesce(m.account, h.asset_num, l.holder_key) as holder,
             m.global_id as member_global_id, e.global_id as enterprise_global_id, e.name as enterprise_name,
             l.pool, l.fingerprint, l.offline, l.created_at, l.heartbeat_at, l.expires_at, l.ended_at,
             l.end_reason, l.used_ms, l.seat_held_until
        from runtime_leases l
        join apps ap on ap.id = l.app_id
        join assets a on a.id = l.asset_id
        join product_instances p on p.id = l.product_id
        join customers c on c.id = p.customer_id
        left join enterprises e on e.id = c.enterprise_id
        left join members m on m.id = l.member_id
        left join assets h on h.id = l.lock_asset_id
       where l.id = ${leaseId}
    `.execute(this.db);
    const r = result.rows[0];
    if (r === undefined) return undefined;
    return {
      id: r.id,
      appKey: r.app_key,
      appName: r.app_name,
      assetNum: r.asset_num,
      productId: Number(r.product_id),
      crmProductId: r.crm_product_id,
      productUri: r.product_uri,
      productName: r.product_name,
      holderKind: r.holder_kind,
      holder: r.holder,
      memberGlobalId: r.member_global_id,
      enterpriseGlobalId: r.enterprise_global_id,
      enterpriseName: r.enterprise_name,
      pool: r.pool,
      fingerprint: r.fingerprint,
      offline: r.offline,
      createdAt: r.created_at,
      heartbeatAt: r.heartbeat_at,
      expiresAt: r.expires_at,
      endedAt: r.ended_at,
      endReason: r.end_reason,
      usedMs: Number(r.used_ms),
      seatHeldUntil: r.seat_held_until,
    };
  }

  /** An employee by global id, with their enterprise and the assets assigned to them. */
  async member(globalId: string): Promise<MemberView | undefined> {
    const result = await sql<{
      id: number | string;
      global_id: string;
      account: string;
      user_name: string;
      name: string | null;
      identity: 'admin' | 'member';
      department_name: string | null;
      deleted: boolean;
      created_at: Date;
      enterprise_global_id: string;
      enterprise_name: string;
    }>`
      select m.id, m.global_id, m.account, m.user_name, m.name, m.identity, m.department_name, m.deleted,
             m.created_at, e.global_id as enterprise_global_id, e.name as enterprise_name
        from members m join enterprises e on e.id = m.enterprise_id
       where m.global_id = ${globalId}
    `.execute(this.db);
    const m = result.rows[0];
    if (m === undefined) return undefined;
    const assets = await sql<{ asset_num: string; license_type: string }>`
      select a.asset_num, a.license_type
        from asset_assignments s join assets a on a.id = s.asset_id
       where s.member_id = ${m.id}::bigint
       order by a.asset_num
       limit 100`.execute(this.db);
    return {
      globalId: m.global_id,
      account: m.account,
      userName: m.user_name,
      name: m.name,
      identity: m.identity,
      departmentName: m.department_name,
      deleted: m.deleted,
      createdAt: m.created_at,
      enterpriseGlobalId: m.enterprise_global_id,
      enterpriseName: m.enterprise_name,
      assets: assets.rows.map((r) => ({ assetNum: r.asset_num, licenseType: r.license_type })),
    };
  }

  /** The machines an employee ran, those holding a seat first, then the newest. */
  async memberMachines(globalId: string, now: Date, limit: number): Promise<MachineRow[]> {
    return this.machines(
      sql`l.member_id = (select m.id from members m where m.global_id = ${globalId})`,
      now,
      limit,
    );
  }

  /**
   * The leases `which` picks, holding a seat first, then the newest: the `limit` newest of each
   * kind (live, checked in and holding, any), each by its own index, so a lock used daily for years
   * costs what the page shows.
   */
  private async machines(which: RawBuilder<unknown>, now: Date, limit: number): Promise<MachineRow[]> {
    const result = await sql<MachineSqlRow>`
      with shown as (
        (select l.id from runtime_leases l where ${which} and l.ended_at is null and l.expires_at > ${now}
          order by l.created_at desc limit ${limit})
        union
        (select l.id from runtime_leases l where ${which} and l.seat_held_until > ${now}
          order by l.created_at desc limit ${limit})
        union
        (select l.id from runtime_leases l where ${which} order by l.created_at desc limit ${limit})
      )
      select ${machineColumns(now)}
        from shown x
        join runtime_leases l on l.id = x.id
        join product_instances p on p.id = l.product_id
        left join members m on m.id = l.member_id
        left join assets h on h.id = l.lock_asset_id
       order by ${holdingNow(now)} desc, l.created_at desc, l.id desc
       limit ${limit}
    `.execute(this.db);
    return result.rows.map(machineOf);
  }
}
