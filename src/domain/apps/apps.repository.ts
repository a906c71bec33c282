import type { Db } from '../../db/client.js';
import { likeLiteral, likeSubstring } from '../../db/like.js';
import { sql, type Expression, type RawBuilder, type Selectable } from 'kysely';
import type { AppsTable } from '../../db/schema.js';

export type AppStatus = AppsTable['status'];

export interface AppRecord {
  id: string;
  appKey: string;
  secretHash: string;
  name: string;
  scopes: string[];
  channels: string[];
  status: AppStatus;
  offlineLeaseMaxDays: number;
  offlineEarlyReturn: boolean;
  restrictToChannels: boolean;
  /** Its calls a minute, all instances together; null: the server's RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute: number | null;
  createdAt: Date;
}

/** What an operator changes on an app after creating it. */
export interface AppChanges {
  status?: AppStatus;
  secretHash?: string;
  offlineLeaseMaxDays?: number;
  offlineEarlyReturn?: boolean;
  restrictToChannels?: boolean;
  rateLimitPerMinute?: number | null;
}

const columns = [
  'id',
  'app_key',
  'secret_hash',
  'name',
  'scopes',
  'channels',
  'status',
  'offline_lease_max_days',
  'offline_early_return',
  'restrict_to_channels',
  'rate_limit_per_minute',
  'created_at',
] as const;

function toRecord(row: Pick<Selectable<AppsTable>, (typeof columns)[number]>): AppRecord {
  return {
    id: row.id,
    appKey: row.app_key,
    secretHash: row.secret_hash,
    name: row.name,
    scopes: row.scopes,
    channels: row.channels,
    status: row.status,
    offlineLeaseMaxDays: row.offline_lease_max_days,
    offlineEarlyReturn: row.offline_early_return,
    restrictToChannels: row.restrict_to_channels,
    rateLimitPerMinute: row.rate_limit_per_minute,
    createdAt: row.created_at,
  };
}

/**
 * Whether the app whose row is `app` (a table alias) serves members of `enterprise`: every
 * enterprise (DOMAIN.md §2), unless it is restricted to its channels; then only an enterprise with a
 * customer in one of them (by customers_enterprise_idx).
 */
export function servesEnterprise(app: string, enterprise: Expression<number>): RawBuilder<boolean> {
  return sql<boolean>`(not ${sql.ref(`${app}.restrict_to_channels`)} or exists (
    select 1 from customers c
     where c.enterprise_id = ${enterprise} and c.channel_code = any(${sql.ref(`${app}.channels`)})))`;
}

export class AppsRepository {
  constructor(private readonly db: Db) {}

  async insert(
    app: Omit<
      AppRecord,
      'createdAt' | 'offlineLeaseMaxDays' | 'offlineEarlyReturn' | 'restrictToChannels' | 'rateLimitPerMinute'
    >,
  ): Promise<AppRecord> {
    const row = await this.db
      .insertInto('apps')
      .values({
        id: app.id,
        app_key: app.appKey,
        secret_hash: app.secretHash,
        name: app.name,
        scopes: app.scopes,
        channels: app.channels,
        status: app.status,
      })
      .returning(columns)
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }

  /** With `lock`, the row stays locked to the transaction: its status is the one it changes. */
  async findByKey(appKey: string, options: { lock?: boolean } = {}): Promise<AppRecord | undefined> {
    let query = this.db.selectFrom('apps').select(columns).where('app_key', '=', appKey);
    if (options.lock === true) query = query.forUpdate();
    const row = await query.executeTakeFirst();
    return row && toRecord(row);
  }

  /** The key and name of each of these apps (ids of apps since deleted are absent). */
  async namesOf(ids: readonly string[]): Promise<Map<string, { appKey: string; name: string }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('apps')
      .select(['id', 'app_key', 'name'])
      .where('id', 'in', [...new Set(ids)])
      .execute();
    return new Map(rows.map((r) => [r.id, { appKey: r.app_key, name: r.name }]));
  }

  /**
   * One page of apps, newest first, with the number that match: `search` is part of the name
   * (any case) or the start of the key; `excludeKey`, an app left out.
   */
  async page(query: {
    search?: string;
    excludeKey?: string;
    offset: number;
    limit: number;
  }): Promise<{ total: number; apps: AppRecord[] }> {
    let filtered = this.db.selectFrom('apps');
    if (query.excludeKey !== undefined) filtered = filtered.where('app_key', '<>', query.excludeKey);
    const search = query.search?.trim();
    if (search !== undefined && search !== '') {
      filtered = filtered.where((eb) =>
        eb.or([eb('name', 'ilike', likeSubstring(search)), eb('app_key', 'like', `${likeLiteral(search)}%`)]),
      );
    }
    const [count, rows] = await Promise.all([
      filtered.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
      filtered
        .select(columns)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .offset(query.offset)
        .limit(query.limit)
        .execute(),
    ]);
    return { total: Number(count.total), apps: rows.map(toRecord) };
  }

  /** The app's longest offline lease in days, or undefined for no such app. */
  async offlineLeaseMaxDays(appId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('apps')
      .select('offline_lease_max_days')
      .where('id', '=', appId)
      .executeTakeFirst();
    return row?.offline_lease_max_days;
  }

  /** Whether the app's offline leases free their seat at check-in, or undefined for no such app. */
  async offlineEarlyReturn(appId: string): Promise<boolean | undefined> {
    const row = await this.db
      .selectFrom('apps')
      .select('offline_early_return')
      .where('id', '=', appId)
      .executeTakeFirst();
    return row?.offline_early_return;
  }

  /** Whether the app serves the enterprise with this code (servesEnterprise); false for no such code. */
  async servesEnterpriseCode(appId: string, code: string): Promise<boolean> {
    const result = await sql<{ served: boolean }>`
      select exists (
        select 1 from apps a join enterprises e on e.code = ${code}
         where a.id = ${appId} and ${servesEnterprise('a', sql.ref<number>('e.id'))}
      ) as served
    `.execute(this.db);
    return result.rows[0]?.served === true;
  }

  async list(): Promise<AppRecord[]> {
    const rows = await this.db.selectFrom('apps').select(columns).orderBy('created_at').execute();
    return rows.map(toRecord);
  }

  async update(appKey: string, changes: AppChanges): Promise<AppRecord | undefined> {
    const row = await this.db
      .updateTable('apps')
      .set({
        ...(changes.status === undefined ? {} : { status: changes.status }),
        ...(changes.secretHash === undefined ? {} : { secret_hash: changes.secretHash }),
        ...(changes.offlineLeaseMaxDays === undefined
          ? {}
          : { offline_lease_max_days: changes.offlineLeaseMaxDays }),
        ...(changes.offlineEarlyReturn === undefined
          ? {}
          : { offline_early_return: changes.offlineEarlyReturn }),
        ...(changes.restrictToChannels === undefined
          ? {}
          : { restrict_to_channels: changes.restrictToChannels }),
        ...(changes.rateLimitPerMinute === undefined
          ? {}
          : { rate_limit_per_minute: changes.rateLimitPerMinute }),
        updated_at: new Date(),
      })
      .where('app_key', '=', appKey)
      .returning(columns)
      .executeTakeFirst();
    return row && toRecord(row);
  }
}
