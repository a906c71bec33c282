import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { likeSubstring } from '../../db/like.js';

/** A channel customer as the operator's directory shows it. */
export interface DirectoryCustomer {
  id: string;
  channelCode: string | null;
  channelCustomerId: string | null;
  crmCustomerId: string | null;
  name: string | null;
  isDefault: boolean;
}

export interface DirectoryEnterprise {
  globalId: string;
  name: string;
  code: string;
  memberCount: number;
  memberLimit: number | null;
  createdAt: number;
  customers: DirectoryCustomer[];
}

/** How many customers a directory row names; the detail page lists them all. */
const CUSTOMERS_PER_ROW = 20;

/**
 * The operator's view across every tenant: enterprises with their channel customers. The
 * operator stands above the tenants, so nothing here is scoped; the console's operator gate is.
 */
export class EnterpriseDirectoryRepository {
  constructor(private readonly db: Db) {}

  /**
   * A page of enterprises, newest first, matching the keyword as part of the name or exactly as
   * an enterprise code, global id or channel customer id. The name match scans enterprises (one
   * row per tenant); the channel customer id one reads customers by that column.
   */
  async search(query: { keyword: string; offset: number; limit: number }) {
    const keyword = query.keyword.trim();
    let base = this.db.selectFrom('enterprises as e');
    if (keyword !== '') {
      base = base.where((eb) =>
        eb.or([
          eb('e.name', 'ilike', likeSubstring(keyword)),
          eb('e.code', '=', keyword),
          eb('e.global_id', '=', keyword),
          eb(
            'e.id',
            'in',
            eb
              .selectFrom('customers as c')
              .select(sql<number>`c.enterprise_id`.as('enterprise_id'))
              .where('c.channel_customer_id', '=', keyword)
              .where('c.enterprise_id', 'is not', null),
          ),
        ]),
      );
    }
    const [rows, total] = await Promise.all([
      base
        .select([
          'e.id',
          'e.global_id',
          'e.name',
          'e.code',
          'e.member_count',
          'e.member_limit',
          'e.created_at',
        ])
        .orderBy('e.id', 'desc')
        .offset(query.offset)
        .limit(query.limit)
        .execute(),
      base.select(sql<string>`count(*)`.as('n')).executeTakeFirstOrThrow(),
    ]);
    const customers = await this.customersOf(
      rows.map((r) => r.id),
      CUSTOMERS_PER_ROW,
    );
    return {
      total: Number(total.n),
      list: rows.map((r) => this.view(r, customers.get(r.id) ?? [])),
    };
  }

  /** One enterprise with all its customers; undefined for an unknown global id. */
  async find(globalId: string): Promise<DirectoryEnterprise | undefined> {
    const row = await this.db
      .selectFrom('enterprises as e')
      .select(['e.id', 'e.global_id', 'e.name', 'e.code', 'e.member_count', 'e.member_limit', 'e.created_at'])
      .where('e.global_id', '=', globalId)
      .executeTakeFirst();
    if (!row) return undefined;
    const customers = await this.customersOf([row.id], 1000);
    return this.view(row, customers.get(row.id) ?? []);
  }

  /** The customers of these enterprises (customers_enterprise_idx), at most `perEnterprise` each. */
  private async customersOf(ids: number[], perEnterprise: number) {
    const found = new Map<number, DirectoryCustomer[]>();
    if (ids.length === 0) return found;
    const rows = await this.db
      .selectFrom('customers')
      .select([
        'id',
        'enterprise_id',
        'channel_code',
        'channel_customer_id',
        'crm_customer_id',
        'name',
        'is_default',
      ])
      .where('enterprise_id', 'in', ids)
      .orderBy('enterprise_id')
      .orderBy('is_default', 'desc')
      .orderBy('created_at')
      .execute();
    for (const r of rows) {
      if (r.enterprise_id === null) continue;
      const list = found.get(r.enterprise_id) ?? [];
      if (list.length >= perEnterprise) continue;
      list.push({
        id: r.id,
        channelCode: r.channel_code,
        channelCustomerId: r.channel_customer_id,
        crmCustomerId: r.crm_customer_id,
        name: r.name,
        isDefault: r.is_default,
      });
      found.set(r.enterprise_id, list);
    }
    return found;
  }

  private view(
    r: {
      global_id: string;
      name: string;
      code: string;
      member_count: number;
      member_limit: number | null;
      created_at: Date;
    },
    customers: DirectoryCustomer[],
  ): DirectoryEnterprise {
    return {
      globalId: r.global_id,
      name: r.name,
      code: r.code,
      memberCount: r.member_count,
      memberLimit: r.member_limit,
      createdAt: r.created_at.getTime(),
      customers,
    };
  }
}
