import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export class AssetNumbersRepository {
  constructor(private readonly db: Db) {}

  /**
   * Draws `size` values from the shared sequence and records the ones no asset holds as one issue
   * to the app, in one statement; answers them in number order (possibly fewer than `size`). A
   * sequence value is never handed out twice, even across instances. A drawn number can already
   * be an asset only if it was created before order op 5 required numbers in Keyward's format to
   * be issued (nothing else creates one without the sequence having drawn it first): such rows
   * were committed before any draw, so the statement sees them, and the value is skipped for good.
   * Taken numbers are found with one index range scan over the drawn span (a draw is nearly always
   * consecutive values), not a probe per number; the run's multirange is one range unless another
   * draw interleaved or a number was skipped.
   */
  async issue(size: number, regionDigit: string, appId: string): Promise<string[]> {
    const result = await sql<{ asset_nums: string[] }>`
      with drawn as materialized (
        select ${regionDigit} || lpad(nextval('asset_number_seq')::text, 9, '0') as asset_num
          from generate_series(1, ${size}::int)
      ), taken as materialized (
        select a.asset_num from assets a
         where a.asset_num between (select min(asset_num) from drawn) and (select max(asset_num) from drawn)
      ), free as (
        select d.asset_num from drawn d where not exists (select 1 from taken t where t.asset_num = d.asset_num)
      ), run as (
        select array_agg(asset_num order by asset_num) as nums, count(*) as n,
               min(asset_num::bigint) as lo, max(asset_num::bigint) as hi
          from free
      )
      insert into issued_asset_number_runs (app_id, asset_nums, num_ranges)
      select ${appId}, nums,
             case when hi - lo + 1 = n then int8multirange(int8range(lo, hi, '[]'))
                  else (select range_agg(int8range(x::bigint, x::bigint, '[]')) from unnest(nums) as x) end
        from run
       where n > 0
      returning asset_nums
    `.execute(this.db);
    return result.rows[0]?.asset_nums ?? [];
  }

  /**
   * Of `assetNums` (all in Keyward's format), those op 9 never issued to the app. One statement
   * whatever the count, an index probe per number.
   */
  async notIssuedTo(appId: string, assetNums: string[]): Promise<Set<string>> {
    if (assetNums.length === 0) return new Set();
    const result = await sql<{ asset_num: string }>`
      select n.asset_num from unnest(${assetNums}::text[]) as n(asset_num)
       where not exists (
         select 1 from issued_asset_number_runs r
          where r.num_ranges @> n.asset_num::bigint and r.app_id = ${appId})
    `.execute(this.db);
    return new Set(result.rows.map((r) => r.asset_num));
  }

  /**
   * Records numbers Keyward issued elsewhere as issued to the app: a relay's grant names the
   * vendor's locks, whose numbers the vendor issued, and the relay's orders may then carry them.
   */
  async recordIssued(appId: string, assetNums: string[]): Promise<void> {
    if (assetNums.length === 0) return;
    await sql`
      insert into issued_asset_number_runs (app_id, asset_nums, num_ranges)
      select ${appId}, array_agg(x order by x), range_agg(int8range(x::bigint, x::bigint, '[]'))
        from unnest(${assetNums}::text[]) as x
    `.execute(this.db);
  }
}
