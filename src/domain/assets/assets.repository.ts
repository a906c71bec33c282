import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { AuditAction, AuditActor } from '../audit/audit-actions.js';
import { EVENT_OF_ACTION } from '../webhooks/event-types.js';
import { outboxCtes } from '../webhooks/outbox-sql.js';

/** Physical locks ops 6–7 may switch: refillable locks and large-customer locks (DOMAIN.md §6). */
export const LOCKABLE_TYPES = [
  'normal_recover_usbkey',
  'normal_recover_lan_usbkey',
  'lk_product_usbkey',
  'lk_auth_usbkey',
] as const;

export interface VisibleAsset {
  id: string;
  assetNum: string;
  licenseType: string;
  customerId: string;
  locked: boolean;
  revoked: boolean;
}

/** A visible asset as ops 6–7 left it: `locked` as found, and whether this call switched it. */
export interface SwitchedAsset extends VisibleAsset {
  changed: boolean;
}

export interface EnterpriseAssetRow {
  id: string;
  assetNum: string;
  licenseType: string;
  customerId: string;
  grantable: boolean;
  keyChipType: number | null;
  locked: boolean;
  freezing: boolean;
  borrowedUsbKey: boolean;
  limitStartTime: number | null;
  limitEndTime: number | null;
  createdAt: number;
  updatedAt: number;
  assignedMemberGlobalId: string | null;
  assignedAt: Date | null;
  extends: Array<{ extendCode: string; extendValue: string | null }>;
}

/** `customers c` belongs to one of the app's channels: everything else reads as absent. */
const visibleCustomer = (channels: string[]) => sql<boolean>`c.channel_code = any(${channels}::text[])`;

/** Assets as the app sees them: only those of customers in its channels. */
export class AssetsRepository {
  constructor(private readonly db: Db) {}

  /** An enterprise the app may see: at least one of its customers is in the app's channels. */
  async findVisibleEnterpriseId(globalId: string, channels: string[]): Promise<number | undefined> {
    const result = await sql<{ id: number }>`
      select e.id from enterprises e
       where e.global_id = ${globalId}
         and exists (select 1 from customers c where c.enterprise_id = e.id and ${visibleCustomer(channels)})
    `.execute(this.db);
    return result.rows[0]?.id;
  }

  /**
   * Ops 6–7 in one statement, atomic on its own: the assets with these numbers that the app may
   * see; `locked` set on those of a lockable type, not revoked and not already in that state; and
   * one audit row per asset this call changed. Every visible asset comes back, with whether this
   * call changed it.
   *
   * No row is locked ahead: the update takes its rows in number order (the order of `found`, which
   * the order service's row locks follow too), and re-checks each row's state after waiting for a
   * concurrent change, so of two calls racing on one lock only one changes and audits it.
   */
  async switchLocked(input: {
    assetNums: string[];
    channels: string[];
    locked: boolean;
    audit: AuditActor & { action: AuditAction };
  }): Promise<SwitchedAsset[]> {
    const { locked, audit } = input;
    const result = await sql<{
      id: string;
      asset_num: string;
      license_type: string;
      customer_id: string;
      locked: boolean;
      revoked: boolean;
      changed: boolean;
    }>`
      with found as (
        select a.id, a.asset_num, a.license_type, a.customer_id, a.locked, a.revoked, c.enterprise_id
          from assets a join customers c on c.id = a.customer_id
         where a.asset_num = any(${input.assetNums}::text[]) and ${visibleCustomer(input.channels)}
         order by a.asset_num
      ),
      changed as (
        update assets a set locked = ${locked}, updated_at = now()
          from found f
         where a.id = f.id and a.license_type = any(${LOCKABLE_TYPES}::text[]) and not a.revoked
           and a.locked <> ${locked}
        returning a.id, a.asset_num
      ),
      audited as (
        insert into audit_log (action, app_id, operator, subject, enterprise_id, detail, request_id, client_request_id)
        select ${audit.action}, ${audit.appId}::text, ${audit.operator}::text, ch.asset_num, f.enterprise_id,
               jsonb_build_object('assetId', ch.id, 'locked', ${locked}::boolean), ${audit.requestId}::text,
               ${audit.clientRequestId}::text
          from changed ch join found f on f.id = ch.id
      ),
      lock_events as (
        select ${EVENT_OF_ACTION[audit.action]?.type ?? null}::text as event_type, null::text as event_app,
               f.enterprise_id, f.customer_id,
               jsonb_build_object('assetNum', ch.asset_num, 'assetId', ch.id, 'locked', ${locked}::boolean) as event_data
          from changed ch join found f on f.id = ch.id
      ),
      ${outboxCtes('lock_events', audit.requestId)}
      select f.id, f.asset_num, f.license_type, f.customer_id, f.locked, f.revoked, ch.id is not null as changed
        from found f left join changed ch on ch.id = f.id
       order by f.asset_num
    `.execute(this.db);
    return result.rows.map((r) => ({
      id: r.id,
      assetNum: r.asset_num,
      licenseType: r.license_type,
      customerId: r.customer_id,
      locked: r.locked,
      revoked: r.revoked,
      changed: r.changed,
    }));
  }

  /**
   * Op 8: the live assets of one license type held by the enterprise's customers in the app's
   * channels, with their assignment, optionally only those with an extension `extendCode`.
   */
  async listEnterpriseAssets(query: {
    enterpriseId: number;
    channels: string[];
    licenseType: string;
    extendCode: string | undefined;
  }): Promise<EnterpriseAssetRow[]> {
    const byExtend =
      query.extendCode === undefined
        ? sql``
        : sql`and exists (select 1 from asset_extends x where x.asset_id = a.id and x.extend_code = ${query.extendCode})`;
    const assets = await sql<{
      id: string;
      asset_num: string;
      license_type: string;
      customer_id: string;
      grantable: boolean;
      key_chip_type: number | null;
      locked: boolean;
      freezing: boolean;
      borrowed_usb_key: boolean;
      limit_start_time: number | null;
      limit_end_time: number | null;
      created_at: Date;
      updated_at: Date;
      member_global_id: string | null;
      assigned_at: Date | null;
    }>`
      select a.id, a.asset_num, a.license_type, a.customer_id, a.grantable, a.key_chip_type, a.locked,
             a.freezing, a.borrowed_usb_key, a.limit_start_time, a.limit_end_time, a.created_at, a.updated_at,
             m.global_id as member_global_id, aa.created_at as assigned_at
        from assets a
        join customers c on c.id = a.customer_id
        left join asset_assignments aa on aa.asset_id = a.id
        left join members m on m.id = aa.member_id
       where c.enterprise_id = ${query.enterpriseId} and ${visibleCustomer(query.channels)}
         and a.license_type = ${query.licenseType} and not a.revoked ${byExtend}
       order by a.created_at, a.asset_num
    `.execute(this.db);
    const ids = assets.rows.map((a) => a.id);
    const extendRows =
      ids.length === 0
        ? []
        : await this.db
            .selectFrom('asset_extends')
            .select(['asset_id', 'extend_code', 'extend_value'])
            .where('asset_id', '=', sql<string>`any(${ids}::text[])`)
            .orderBy('asset_id')
            .orderBy('extend_code')
            .execute();
    const extendsOf = new Map<string, EnterpriseAssetRow['extends']>();
    for (const e of extendRows) {
      const list = extendsOf.get(e.asset_id) ?? [];
      list.push({ extendCode: e.extend_code, extendValue: e.extend_value });
      extendsOf.set(e.asset_id, list);
    }
    return assets.rows.map((a) => ({
      id: a.id,
      assetNum: a.asset_num,
      licenseType: a.license_type,
      customerId: a.customer_id,
      grantable: a.grantable,
      keyChipType: a.key_chip_type,
      locked: a.locked,
      freezing: a.freezing,
      borrowedUsbKey: a.borrowed_usb_key,
      limitStartTime: a.limit_start_time,
      limitEndTime: a.limit_end_time,
      createdAt: a.created_at.getTime(),
      updatedAt: a.updated_at.getTime(),
      assignedMemberGlobalId: a.member_global_id,
      assignedAt: a.assigned_at,
      extends: extendsOf.get(a.id) ?? [],
    }));
  }
}
