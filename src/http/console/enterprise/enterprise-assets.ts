import type { AssetNumView, LentLockView } from '../../../domain/member-assets/member-assets.service.js';
import { KeywardError } from '../../../errors/keyward-error.js';
import { MemberCode } from '../../../errors/member-codes.js';
import type { Services } from '../../../services.js';

/** An enterprise without an authorization customer has no assets yet (60017): an empty list to show. */
async function orNone<T>(list: Promise<T[]>): Promise<T[]> {
  try {
    return await list;
  } catch (error) {
    if (error instanceof KeywardError && error.code === MemberCode.notBound) return [];
    throw error;
  }
}

export interface EnterpriseAssets {
  /** Member op 6: every asset, lent locks included. */
  assets: AssetNumView[];
  /** Member op 8. */
  locks: LentLockView[];
  lockNums: ReadonlySet<string>;
}

/** Ops 6 and 8 together, as the asset, lent-lock and employee pages show them. */
export async function enterpriseAssets(services: Services, enterpriseId: number): Promise<EnterpriseAssets> {
  const [assets, locks] = await Promise.all([
    orNone(services.memberAssets.listAssetNums(enterpriseId)),
    orNone(services.memberAssets.listLentLocks(enterpriseId)),
  ]);
  return { assets, locks, lockNums: new Set(locks.map((l) => l.assetNum)) };
}
