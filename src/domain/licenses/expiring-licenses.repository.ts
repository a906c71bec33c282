import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/client.js';
import { seatsUsedOf } from './license-views.repository.js';

/** A license (a product on an asset) ending soon, with its seats' use now. */
export interface ExpiringLicense {
  assetNum: string;
  assetId: string;
  crmProductId: string | null;
  productUri: string | null;
  productName: string | null;
  /** The earlier of the asset's and the product's end, ms since the epoch. */
  endsAt: number;
  /** limitConcurrent: the seats licensed; null when the license does not count them. */
  seatsLicensed: number | null;
  /** Machines holding a seat now: live leases, and checked-in offline leases still holding theirs. */
  seatsUsed: number;
  enterpriseGlobalId: string | null;
  enterpriseName: string | null;
  channelCode: string | null;
}

/** A span of ends, ms since the epoch, both included. */
export type EndRange = readonly [from: number, to: number];

/**
 * The ids of the live licenses whose end (the earlier of the asset's and the product's
 * limit_end_time, as the runtime judges it) falls within one of `ranges`: range reads of each
 * end's partial index (migration 0184), so the cost follows the licenses in the ranges, not all.
 * Columns `product_id`, `ends_at`.
 */
export function licensesEndingWithin(ranges: readonly EndRange[]): RawBuilder<unknown> {
  const within = (column: RawBuilder<unknown>) =>
    sql.join(
      ranges.map(([from, to]) => sql`${column} between ${from}::bigint and ${to}::bigint`),
      sql` or `,
    );
  const near = sql.join(
    ranges.map(
      ([from, to]) => sql`
        select p.id from product_instances p
         where not p.revoked and p.limit_end_time is not null
           and p.limit_end_time between ${from}::bigint and ${to}::bigint
        union
        select p.id from assets a join product_instances p on p.asset_id = a.id and not p.revoked
         where not a.revoked and a.limit_end_time is not null
           and a.limit_end_time between ${from}::bigint and ${to}::bigint`,
    ),
    sql` union `,
  );
  return sql`
    select p.id as product_id, least(a.limit_end_time, p.limit_end_time) as ends_at
      from (${near}) near
      join product_instances p on p.id = near.id
      join assets a on a.id = p.asset_id and not a.revoked
     where ${within(sql`least(a.limit_end_time, p.limit_end_time)`)}`;
}

interface Row {
  asset_num: string;
  asset_id: string;
  crm_product_id: string | null;
  product_uri: string | null;
  product_name: string | null;
  ends_at: number | string;
  limit_concurrent: number | null;
  seats_used: number;
  enterprise_global_id: string | null;
  enterprise_name: string | null;
  channel_code: string | null;
}

export class ExpiringLicensesRepository {
  constructor(private readonly db: Db) {}

  /** Licenses ending within [now, until], soonest first, of one enterprise when named (its global id). */
  async list(query: {
    now: Date;
    until: Date;
    enterprise?: string;
    limit: number;
  }): Promise<ExpiringLicense[]> {
    const now = query.now;
    const [from, to] = [now.getTime(), query.until.getTime()];
    const ofEnterprise =
      query.enterprise === undefined
        ? sql``
        : sql`and p.customer_id in (select c.id from customers c join enterprises e on e.id = c.enterprise_id
                                     where e.global_id = ${query.enterprise})`;
    // The soonest `limit` licenses are among the soonest `limit` by the asset's end and the soonest
    // `limit` by the product's (a license's end is the earlier of the two, and every license ahead
    // of it in either order ends no later), so each is one ordered walk of an end index that stops
    // at `limit`, however many licenses end within the horizon. Only licenses that have not ended
    // by the other end count in each walk, or ended ones could fill it. The seats are counted for
    // the licenses shown only.
    const result = await sql<Row>`
      with candidates as (
        (select p.id from assets a join product_instances p on p.asset_id = a.id and not p.revoked
          where not a.revoked and a.limit_end_time is not null
            and a.limit_end_time between ${from}::bigint and ${to}::bigint
            and (p.limit_end_time is null or p.limit_end_time >= ${from}::bigint) ${ofEnterprise}
          order by a.limit_end_time
          limit ${query.limit})
        union
        (select p.id from product_instances p join assets a on a.id = p.asset_id and not a.revoked
          where not p.revoked and p.limit_end_time is not null
            and p.limit_end_time between ${from}::bigint and ${to}::bigint
            and (a.limit_end_time is null or a.limit_end_time >= ${from}::bigint) ${ofEnterprise}
          order by p.limit_end_time
          limit ${query.limit})
      ),
      soonest as materialized (
        select p.id, a.asset_num, a.id as asset_id, p.crm_product_id, p.product_uri, p.product_name,
               least(a.limit_end_time, p.limit_end_time) as ends_at, p.limit_concurrent,
               e.global_id as enterprise_global_id, e.name as enterprise_name, c.channel_code
          from candidates x
          join product_instances p on p.id = x.id
          join assets a on a.id = p.asset_id
          join customers c on c.id = p.customer_id
          left join enterprises e on e.id = c.enterprise_id
         where least(a.limit_end_time, p.limit_end_time) between ${from}::bigint and ${to}::bigint
         order by 7, a.asset_num, p.id
         limit ${query.limit}
      )
      select s.*, ${seatsUsedOf(sql`s.id`, now)} as seats_used
        from soonest s
       order by s.ends_at, s.asset_num, s.id
    `.execute(this.db);
    return result.rows.map((r) => ({
      assetNum: r.asset_num,
      assetId: r.asset_id,
      crmProductId: r.crm_product_id,
      productUri: r.product_uri,
      productName: r.product_name,
      endsAt: Number(r.ends_at),
      seatsLicensed: r.limit_concurrent,
      seatsUsed: r.seats_used,
      enterpriseGlobalId: r.enterprise_global_id,
      enterpriseName: r.enterprise_name,
      channelCode: r.channel_code,
    }));
  }
}
