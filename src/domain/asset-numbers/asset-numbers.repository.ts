import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export class AssetNumbersRepository {
  constructor(private readonly db: Db) {}

  /**
   * Draws `size` values from the shared sequence and records them as one issue to the app, in one
   * statement: a sequence value is never handed out twice, even across instances. In number order.
   */
  async issue(size: number, regionDigit: string, appId: string): Promise<string[]> {
    const result = await sql<{ asset_nums: string[] }>`
      with drawn as (
        select ${regionDigit} || lpad(nextval('asset_number_seq')::text, 9, '0') as asset_num
          from generate_series(1, ${size}::int)
      )
      insert into issued_asset_number_runs (app_id, asset_nums)
      select ${appId}, array_agg(asset_num order by asset_num) from drawn
      returning asset_nums
    `.execute(this.db);
    return result.rows[0]?.asset_nums ?? [];
  }
}
