import type { Region } from '../../config.js';
import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';
import { AssetNumbersRepository } from './asset-numbers.repository.js';

const REGION_DIGIT: Record<Region, string> = { cn: '8', sg: '6' };

/** PostgreSQL's "sequence reached its maximum value". */
const SEQUENCE_EXHAUSTED = '2200H';

export class AssetNumbersService {
  private readonly numbers: AssetNumbersRepository;

  constructor(
    db: Db,
    private readonly region: Region,
  ) {
    this.numbers = new AssetNumbersRepository(db);
  }

  /**
   * Order op 9: `size` fresh 10-digit numbers, the region digit and a 9-digit counter. `within` is
   * the caller's transaction when the numbers are issued as part of a larger write (a cloud order).
   */
  async issue(size: number, appId: string, within?: Db): Promise<string[]> {
    const numbers = within === undefined ? this.numbers : new AssetNumbersRepository(within);
    try {
      return await numbers.issue(size, REGION_DIGIT[this.region], appId);
    } catch (error) {
      if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) {
        throw new KeywardError(OrderCode.validation, 'size: asset numbers are exhausted for this region', {
          cause: 'the 9-digit counter reached 999999999',
        });
      }
      throw error;
    }
  }
}
