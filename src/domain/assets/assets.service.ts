import type { Db } from '../../db/client.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { releasedLockChanges } from '../lending/lending-audit.js';
import { LendingRepository } from '../lending/lending.repository.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { OrderCode } from '../../errors/order-codes.js';
import {
  AssetsRepository,
  LOCKABLE_TYPES,
  type EnterpriseAssetRow,
  type VisibleAsset,
} from './assets.repository.js';

/** Ops 6–7 per lock: 1 done (or already so), 2 no such lock for this app, 3 revoked, 4 not a lockable type. */
export type LockStatus = 1 | 2 | 3 | 4;

export interface LockOutcome {
  assetNum: string;
  status: LockStatus;
}

export interface AssetScope {
  appId: string;
  channels: string[];
}

/** The spec's "Asset record" (order op 8). */
export interface AssetRecord {
  id: string;
  licenseType: string;
  assetNum: string;
  grantable: boolean;
  customerId: string;
  keyShellNumber: string | null;
  keyChipType: number | null;
  locked: boolean;
  freezing: boolean;
  createTime: number;
  updateTime: number;
  limitStartTime: number | null;
  limitEndTime: number | null;
  assignStatus: {
    id: string;
    assignStatus: 'assigned' | 'unassigned';
    assignMemberId: string | null;
    createTime: string | null;
    updateTime: null;
  };
  assetLimits: null;
  assetExtends: Array<{ extendCode: string; extendValue: string | null }>;
  borrowedUsbKey: boolean;
}

function invalid(message: string): KeywardError {
  return new KeywardError(OrderCode.validation, message);
}

/** A lock the app can see: 4 not a lockable type, 3 revoked, else 1 (2 is for numbers not found). */
function lockStatus(asset: VisibleAsset): LockStatus {
  if (!(LOCKABLE_TYPES as readonly string[]).includes(asset.licenseType)) return 4;
  return asset.revoked ? 3 : 1;
}

function toRecord(row: EnterpriseAssetRow): AssetRecord {
  const digits = row.assetNum.replace(/[^0-9]/g, '');
  return {
    id: row.id,
    licenseType: row.licenseType,
    assetNum: row.assetNum,
    grantable: row.grantable,
    customerId: row.customerId,
    keyShellNumber: digits === '' ? null : digits,
    keyChipType: row.keyChipType,
    locked: row.locked,
    freezing: row.freezing,
    createTime: row.createdAt,
    updateTime: row.updatedAt,
    limitStartTime: row.limitStartTime,
    limitEndTime: row.limitEndTime,
    assignStatus: {
      id: row.id,
      assignStatus: row.assignedMemberGlobalId === null ? 'unassigned' : 'assigned',
      assignMemberId: row.assignedMemberGlobalId,
      createTime: row.assignedAt?.toISOString() ?? null,
      updateTime: null,
    },
    assetLimits: null,
    assetExtends: row.extends,
    borrowedUsbKey: row.borrowedUsbKey,
  };
}

/** Order ops 6–8: physical locks switched on and off, and an enterprise's cloud assets. */
export class AssetsService {
  constructor(private readonly db: Db) {}

  /**
   * Ops 6 (locked = true) and 7 (false). Idempotent: a lock already in the state answers 1 and
   * writes nothing. Every change is audited in the transaction that makes it, under the
   * operator the call names.
   */
  async setLocked(input: {
    scope: AssetScope;
    assetNums: string[];
    operatorIdentity: string;
    locked: boolean;
    actor: AuditActor;
  }): Promise<LockOutcome[]> {
    const operator = input.operatorIdentity.trim();
    if (operator === '') throw invalid('operatorIdentity: must not be empty');
    const actor: AuditActor = { ...input.actor, operator };
    const switchLocks = (db: Db) =>
      new AssetsRepository(db).switchLocked({
        assetNums: [...new Set(input.assetNums)],
        channels: input.scope.channels,
        locked: input.locked,
        audit: { ...actor, action: input.locked ? 'asset.lock' : 'asset.unlock' },
      });
    // Enabling is one statement. Disabling also ends what was lent to the locks, in a second
    // statement of the same transaction: its fresh snapshot sees every lending that committed
    // before the first one took the rows, and a lending that comes later waits for the commit and
    // then finds the lock disabled (ADR 0009).
    const found = !input.locked
      ? await switchLocks(this.db)
      : await this.db.transaction().execute(async (trx) => {
          const switched = await switchLocks(trx);
          const released = await new LendingRepository(trx).endForLocks(
            switched.filter((a) => lockStatus(a) === 1).map((a) => a.id),
          );
          await new AuditRepository(trx).record(actor, releasedLockChanges(released, 'lock_disabled'));
          return switched;
        });
    const statusOf = new Map(found.map((a) => [a.assetNum, lockStatus(a)]));
    return input.assetNums.map((assetNum) => ({ assetNum, status: statusOf.get(assetNum) ?? 2 }));
  }

  /**
   * Op 8: the enterprise's `cloud_customer` assets, only those with extension `extendCode` when
   * one is given (an empty `extendCode=` is none).
   */
  async listEnterpriseAssets(
    scope: AssetScope,
    enterpriseGlobalId: string,
    extendCode: string | undefined,
  ): Promise<AssetRecord[]> {
    const assets = new AssetsRepository(this.db);
    const enterpriseId = await assets.findVisibleEnterpriseId(enterpriseGlobalId, scope.channels);
    if (enterpriseId === undefined) throw invalid('enterpriseGlobalId: no such enterprise');
    const rows = await assets.listEnterpriseAssets({
      enterpriseId,
      channels: scope.channels,
      licenseType: 'cloud_customer',
      extendCode: extendCode === '' ? undefined : extendCode,
    });
    return rows.map(toRecord);
  }
}
