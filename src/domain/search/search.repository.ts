import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { likeLiteral } from '../../db/like.js';

/** What a search found: the kind of thing, the key of its page, and what to show of it. */
export interface SearchHit {
  kind: 'asset' | 'lease' | 'order' | 'enterprise' | 'member' | 'app';
  /** The key of its page: asset number, lease id, order batch id, enterprise global id, app key. */
  key: string;
  /** What the operator typed it as, or its name. */
  label: string;
  /** A second line: whose it is. */
  detail: string | null;
  /** The enterprise it belongs to, when it belongs to one (a member's page is its enterprise's). */
  enterpriseGlobalId: string | null;
}

interface Row {
  kind: SearchHit['kind'];
  key: string;
  label: string;
  detail: string | null;
  enterprise_global_id: string | null;
}

/**
 * The console's search: exact lookups by every identifier an operator is handed (asset or lock
 * number, lease id, order id, app key, enterprise id or code, member account), and enterprises by
 * the beginning of their name. One statement; each branch reads one index (migration 0185 and the
 * unique indexes), so its cost does not grow with the rows there are.
 */
export class SearchRepository {
  constructor(private readonly db: Db) {}

  async find(text: string, limit: number): Promise<SearchHit[]> {
    const prefix = `${likeLiteral(text.toLowerCase())}%`;
    const result = await sql<Row>`
      select 'asset' as kind, a.asset_num as key, a.asset_num as label, e.name as detail,
             e.global_id as enterprise_global_id
        from assets a
        join customers c on c.id = a.customer_id
        left join enterprises e on e.id = c.enterprise_id
       where a.asset_num = ${text}
      union all
      select 'lease', l.id, l.id, a.asset_num, e.global_id
        from runtime_leases l
        join assets a on a.id = l.asset_id
        join customers c on c.id = a.customer_id
        left join enterprises e on e.id = c.enterprise_id
       where l.id = ${text}
      union all
      select 'order', b.id, b.channel_order_id, b.channel_code, null
        from order_batches b
       where b.channel_order_id = ${text} or b.id = ${text}
          or b.id = (select o.batch_id from license_orders o where o.id = ${text})
      union all
      select 'app', ap.app_key, ap.name, ap.app_key, null from apps ap where ap.app_key = ${text}
      union all
      select 'member', m.global_id, m.account, e.name, e.global_id
        from members m join enterprises e on e.id = m.enterprise_id
       where lower(m.account) = lower(${text}) and not m.deleted
      union all
      (select 'enterprise', e.global_id, e.name, e.code, e.global_id
         from enterprises e
        where e.global_id = ${text} or e.code = ${text} or lower(e.name) like ${prefix}
        order by lower(e.name), e.id
        limit ${limit})
      limit ${limit}
    `.execute(this.db);
    return result.rows.map((r) => ({
      kind: r.kind,
      key: r.key,
      label: r.label,
      detail: r.detail,
      enterpriseGlobalId: r.enterprise_global_id,
    }));
  }
}
