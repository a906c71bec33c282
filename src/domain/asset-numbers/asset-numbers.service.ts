import type { Region } from '../../config.js';
import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';
import { AssetNumbersRepository } from './asset-numbers.repository.js';

const REGION_DIGIT: Record<Region, string> = { cn: '8', sg: '6' };

/**
 * Keyward's own format: a region digit and a 9-digit counter. Both regions' digits count wherever
 * Keyward runs: the sequence draws the configured one, but a deployment whose region is changed
 * draws the other, so no number of either form may be taken without being issued.
 */
const KEYWARD_FORMAT = /^[68][0-9]{9}$/;

export function isKeywardFormat(assetNum: string): boolean {
  return KEYWARD_FORMAT.test(assetNum);
}

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

  private on(within: Db | undefined): AssetNumbersRepository {
    return within === undefined ? this.numbers : new AssetNumbersRepository(within);
  }

  /**
   * Order op 9: `size` fresh 10-digit numbers, the region digit and a 9-digit counter, none of
   * them an existing asset. `within` is the caller's transaction when the numbers are issued as
   * part of a larger write (a cloud order).
   */
  async issue(size: number, appId: string, within?: Db): Promise<string[]> {
    const numbers = this.on(within);
    const issued: string[] = [];
    try {
      // One statement draws them all; only a draw that met taken numbers needs another.
      while (issued.length < size) {
        issued.push(...(await numbers.issue(size - issued.length, REGION_DIGIT[this.region], appId)));
      }
      return issued;
    } catch (error) {
      if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) {
        throw new KeywardError(OrderCode.validation, 'size: asset numbers are exhausted for this region', {
          cause: 'the 9-digit counter reached 999999999',
        });
      }
      throw error;
    }
  }

  /** Of these numbers in Keyward's format, those op 9 did not issue to the app. */
  async notIssuedTo(appId: string, assetNums: string[], within?: Db): Promise<Set<string>> {
    return this.on(within).notIssuedTo(appId, assetNums);
  }

  /** Numbers in Keyward's format that the vendor issued, recorded as issued to a relay's own app. */
  async recordIssued(appId: string, assetNums: string[], within?: Db): Promise<void> {
    const unrecorded = await this.notIssuedTo(appId, assetNums.filter(isKeywardFormat), within);
    await this.on(within).recordIssued(appId, [...unrecorded]);
  }
}
