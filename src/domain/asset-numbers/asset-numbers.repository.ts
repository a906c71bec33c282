import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export class AssetNumbersRepository {
  constructor(private readonly db: Db) {}

  /**
   * Draws `size` values from the shared sequence and records each number as issued to the app,
   * in one statement: a sequence value is never handed out twice, even across instances.
   */
  async issue(size: number, regionDigit: string, appId: string): Promise<string[]> {
    const result = await sql<{ asset_num: string }>`
      with drawn as (
        select nextval('asset_number_seq') as value from generate_series(1, ${size}::int)
      )
      insert into issued_asset_numbers (asset_num, app_id)
      select ${regionDigit} || lpad(value::text, 9, '0'), ${appId} from drawn
      returning asset_num
    `.execute(this.db);
    return result.rows.map((r) => r.asset_num).sort();
  }
}
