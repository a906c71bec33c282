import type { AuditChange, AuditDetail } from '../audit/audit-actions.js';
import type { ReleasedLock } from './lending.repository.js';

/** Why a lent lock went back without being returned (member op 10's return). */
export type LendingEndReason =
  'lock_disabled' | 'asset_revoked' | 'product_revoked' | 'asset_unassigned' | 'member_deleted';

/**
 * One row per lent lock given back: returned by its member, or ended by another change (`more`
 * names that change, e.g. the license order that revoked the lent asset).
 */
export function releasedLockChanges(
  released: readonly ReleasedLock[],
  reason: LendingEndReason | 'returned',
  more: AuditDetail = {},
): AuditChange[] {
  return released.map((lock) => ({
    action: reason === 'returned' ? 'lending.returned' : 'lending.ended',
    subject: lock.lockNum,
    enterprise: { id: lock.enterpriseId },
    detail: {
      lockAssetId: lock.lockAssetId,
      memberGlobalId: lock.memberGlobalId,
      ...(reason === 'returned' ? {} : { reason }),
      ...more,
    },
  }));
}
