import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { MemberCode, memberMessages, type MemberCodeValue } from '../../errors/member-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import type { MemberReleaseHook } from '../members/members.service.js';
import { releasedLockChanges } from './lending-audit.js';
import { LendingRepository, type LendingAsset } from './lending.repository.js';

export interface BorrowInput {
  borrowedUsbKey: string;
  assetIDs: string[];
}

function refuse(code: MemberCodeValue, cause: string): KeywardError {
  return new KeywardError(code, memberMessages[code], { cause });
}

function memberNotMatched(memberGlobalId: string): KeywardError {
  return refuse(MemberCode.memberNotMatched, `no member ${memberGlobalId} in this enterprise`);
}

function lockTaken(lock: LendingAsset): KeywardError {
  return refuse(MemberCode.lentLockTaken, `lent lock ${lock.assetNum} is lent to another member`);
}

/** Member op 4 gives back the deleted member's lent lock in its own transaction. */
export const releaseMemberLendings: MemberReleaseHook = async (trx, member) =>
  releasedLockChanges(
    await new LendingRepository(trx).endForMember(member.enterpriseId, member.id),
    'member_deleted',
  );

/**
 * Member op 10 and its inverse. Each runs in one transaction that locks the member, then the lent
 * lock and the assets, so of two calls racing for one lock or one asset the second sees what the
 * first did and answers its code.
 */
export class LendingService {
  constructor(private readonly db: Db) {}

  /** Op 10: the guards of DOMAIN.md §8, in its order, then the lending itself. */
  async borrow(
    enterpriseId: number,
    memberGlobalId: string,
    input: BorrowInput,
    actor: AuditActor,
  ): Promise<void> {
    const assetIds = [...new Set(input.assetIDs)];
    await this.db.transaction().execute(async (trx) => {
      const repo = new LendingRepository(trx);
      const memberId = await repo.lockMember(enterpriseId, memberGlobalId);
      if (memberId === undefined) throw memberNotMatched(memberGlobalId);
      const found = await repo.lockAssets(enterpriseId, input.borrowedUsbKey, assetIds);
      const lock = usableLock(found, input.borrowedUsbKey, { mustBeEnabled: true });
      const holder = await repo.holderOf(lock.id);
      if (holder && holder.memberId !== memberId) {
        throw lockTaken(lock);
      }
      const assigned = await repo.assignedTo(memberId, assetIds);
      const stranger = assetIds.find((id) => !assigned.has(id));
      if (stranger !== undefined) {
        throw refuse(MemberCode.permission, `asset ${stranger} is not assigned to member ${memberGlobalId}`);
      }
      const lent = await repo.lent(assetIds);
      const again = assetIds.find((id) => lent.has(id));
      if (again !== undefined) throw refuse(MemberCode.alreadyLent, `asset ${again} is lent already`);
      const full = (await repo.productsWithoutNode(assetIds))[0];
      if (full) {
        throw refuse(
          MemberCode.nodesInsufficient,
          `product ${full.productId} on asset ${full.assetId} has no free node of ${full.limitConcurrent}`,
        );
      }
      await this.otherFailures(repo, { memberId, lock, found, assetIds });
      if (!(await repo.holdLock({ enterpriseId, memberId, lockId: lock.id }))) throw lockTaken(lock);
      await repo.lend(lock.id, assetIds);
      await new AuditRepository(trx).record(actor, [
        {
          action: 'lending.lent',
          subject: lock.assetNum,
          enterprise: { id: enterpriseId },
          detail: { lockAssetId: lock.id, memberGlobalId, assetIds },
        },
      ]);
    });
  }

  /** What else makes a lending meaningless (33009): checked after the guards the spec names. */
  private async otherFailures(
    repo: LendingRepository,
    c: { memberId: number; lock: LendingAsset; found: LendingAsset[]; assetIds: string[] },
  ): Promise<void> {
    const ids = new Set(c.assetIds);
    const lockLike = c.found.find((a) => ids.has(a.id) && a.borrowedUsbKey);
    if (lockLike) {
      throw refuse(MemberCode.lendFailed, `asset ${lockLike.assetNum} is a lent lock: it cannot be lent`);
    }
    const holding = await repo.holdingProducts(c.assetIds);
    const empty = c.assetIds.find((id) => !holding.has(id));
    if (empty !== undefined) throw refuse(MemberCode.lendFailed, `asset ${empty} holds no product to lend`);
    const held = await repo.lockHeldBy(c.memberId);
    if (held !== undefined && held !== c.lock.id) {
      throw refuse(MemberCode.lendFailed, 'the member holds another lent lock: return it first');
    }
  }

  /**
   * Gives back everything lent to the lock. A lock lent to nobody is already given back, so that
   * answers success and changes nothing (a retried return does not fail).
   */
  async giveBack(
    enterpriseId: number,
    memberGlobalId: string,
    lockNum: string,
    actor: AuditActor,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      const repo = new LendingRepository(trx);
      const memberId = await repo.lockMember(enterpriseId, memberGlobalId);
      if (memberId === undefined) throw memberNotMatched(memberGlobalId);
      const lock = usableLock(await repo.lockAssets(enterpriseId, lockNum, []), lockNum, {
        mustBeEnabled: false,
      });
      const holder = await repo.holderOf(lock.id);
      if (!holder) return;
      if (holder.memberId !== memberId) {
        throw lockTaken(lock);
      }
      const released = await repo.endForLocks([lock.id]);
      await new AuditRepository(trx).record(actor, releasedLockChanges(released, 'returned'));
    });
  }
}

/**
 * The lent lock among the locked assets: a live `borrowedUsbKey` asset of the enterprise, and for
 * lending not disabled. Anything else, an unknown number included, is 33008.
 */
function usableLock(
  found: LendingAsset[],
  lockNum: string,
  options: { mustBeEnabled: boolean },
): LendingAsset {
  const lock = found.find((a) => a.assetNum === lockNum);
  if (!lock || !lock.borrowedUsbKey) {
    throw refuse(MemberCode.lentLockAbnormal, `${lockNum} is not a lent lock of this enterprise`);
  }
  if (options.mustBeEnabled && lock.locked) {
    throw refuse(MemberCode.lentLockAbnormal, `lent lock ${lockNum} is disabled`);
  }
  return lock;
}
