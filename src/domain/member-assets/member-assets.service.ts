import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { MemberCode, memberMessages, type MemberCodeValue } from '../../errors/member-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { releasedLockChanges } from '../lending/lending-audit.js';
import { LendingRepository } from '../lending/lending.repository.js';
import { assignmentChange } from '../members/member-audit.js';
import { assetTree, type AssetProductsView } from './asset-tree.js';
import { MemberAssetsRepository, type NumberedAsset } from './member-assets.repository.js';

/** Member op 6's item. */
export interface AssetNumView {
  assetNum: string;
  assetId: string;
  cloudAccountGlobalId: string | null;
  borrowedFlag: boolean;
  onlineFlag: boolean;
}

/** Member op 8's item. */
export interface LentLockView {
  assetId: string;
  assetNum: string;
  borrowedFlag: boolean;
  cloudAccountGlobalId: string | null;
}

export interface PrivilegesInput {
  deleteAssets?: string[] | undefined;
  addAssets?: string[] | undefined;
}

function refuse(code: MemberCodeValue, cause: string): KeywardError {
  return new KeywardError(code, memberMessages[code], { cause });
}

/** One number of op 9's body and the field that named it. */
interface Named {
  assetNum: string;
  path: string;
  adding: boolean;
}

/** Member ops 6–9: the enterprise's assets, what is on them, and their assignment to members. */
export class MemberAssetsService {
  constructor(private readonly db: Db) {}

  private async requireCustomers(repo: MemberAssetsRepository, enterpriseId: number): Promise<void> {
    if (!(await repo.hasCustomers(enterpriseId))) {
      throw refuse(MemberCode.notBound, 'the enterprise has no authorization customer bound to it');
    }
  }

  /** Op 6. Nothing reports sessions yet, so no asset is online. */
  async listAssetNums(enterpriseId: number): Promise<AssetNumView[]> {
    const repo = new MemberAssetsRepository(this.db);
    await this.requireCustomers(repo, enterpriseId);
    return (await repo.listAssets(enterpriseId)).map((a) => ({
      assetNum: a.assetNum,
      assetId: a.id,
      cloudAccountGlobalId: a.memberGlobalId,
      borrowedFlag: a.lent,
      onlineFlag: false,
    }));
  }

  /** Op 7: the asset's products and merchandise; on a lent lock, also what is lent to it. */
  async merchandiseProducts(enterpriseId: number, assetId: string): Promise<AssetProductsView> {
    const repo = new MemberAssetsRepository(this.db);
    await this.requireCustomers(repo, enterpriseId);
    const asset = await repo.findAsset(enterpriseId, assetId);
    if (!asset) throw refuse(MemberCode.assetNotFound, `no asset ${assetId} in this enterprise`);
    const products = await repo.productsOn(enterpriseId, asset.id);
    const sources = new Set(products.map((p) => p.assetId));
    sources.add(asset.id);
    const merchandise = await repo.merchandiseOf(enterpriseId, [...sources]);
    return assetTree(asset.id, merchandise, products);
  }

  /** Op 8. */
  async listLentLocks(enterpriseId: number): Promise<LentLockView[]> {
    const repo = new MemberAssetsRepository(this.db);
    await this.requireCustomers(repo, enterpriseId);
    return (await repo.listLentLocks(enterpriseId)).map((a) => ({
      assetId: a.id,
      assetNum: a.assetNum,
      borrowedFlag: a.lent,
      cloudAccountGlobalId: a.memberGlobalId,
    }));
  }

  /**
   * Op 9, all or nothing, in one transaction that locks the member and then the named assets, so
   * of two administrators assigning one asset at once the second sees the first's assignment.
   * Revoking an asset that is lent gives the lending back first. Numbers to revoke that the member
   * does not hold are left as they are; numbers it already holds stay assigned. Each asset that
   * changed hands is audited, with each lent lock its return released, in one insert.
   */
  async configurePrivileges(
    enterpriseId: number,
    memberGlobalId: string,
    input: PrivilegesInput,
    actor: AuditActor,
  ): Promise<void> {
    if (input.deleteAssets === undefined && input.addAssets === undefined) {
      throw refuse(MemberCode.paramEmpty, 'body: give deleteAssets, addAssets or both');
    }
    const named: Named[] = [
      ...(input.deleteAssets ?? []).map((assetNum, i) => ({
        assetNum,
        path: `deleteAssets[${i}]`,
        adding: false,
      })),
      ...(input.addAssets ?? []).map((assetNum, i) => ({ assetNum, path: `addAssets[${i}]`, adding: true })),
    ];
    await this.db.transaction().execute(async (trx) => {
      const repo = new MemberAssetsRepository(trx);
      const memberIds = await repo.lockMembers(enterpriseId, memberGlobalId);
      if (memberIds.length > 1) {
        throw refuse(
          MemberCode.severalMembers,
          `${memberIds.length} members have the global id ${memberGlobalId}`,
        );
      }
      const memberId = memberIds[0];
      if (memberId === undefined) {
        throw refuse(MemberCode.memberNotMatched, `no member ${memberGlobalId} in this enterprise`);
      }
      const found = await repo.lockByNums([...new Set(named.map((n) => n.assetNum))]);
      const assets = checkNumbers(named, found, enterpriseId);
      const holders = await repo.assigneesOf(assets.map((a) => a.asset.id));
      const taken = assets.find((a) => a.adding && (holders.get(a.asset.id) ?? memberId) !== memberId);
      if (taken) {
        throw refuse(
          MemberCode.assignedTwice,
          `${taken.path}: ${taken.assetNum} is assigned to another member`,
        );
      }
      const revoking = assets
        .filter((a) => !a.adding && holders.get(a.asset.id) === memberId)
        .map((a) => a.asset);
      const released = await new LendingRepository(trx).returnAssets(revoking.map((a) => a.id));
      await repo.unassign(
        memberId,
        revoking.map((a) => a.id),
      );
      const adding = assets.filter((a) => a.adding && !holders.has(a.asset.id)).map((a) => a.asset);
      if (
        (await repo.assign(
          memberId,
          adding.map((a) => a.id),
        )) !== adding.length
      ) {
        throw refuse(MemberCode.assignedTwice, 'an asset was assigned to another member meanwhile');
      }
      const member = { globalId: memberGlobalId, enterpriseId };
      await new AuditRepository(trx).record(actor, [
        ...revoking.map((a) => assignmentChange('asset.unassigned', a, member)),
        ...adding.map((a) => assignmentChange('asset.assigned', a, member)),
        ...releasedLockChanges(released, 'asset_unassigned'),
      ]);
    });
  }
}

/** Each number, in body order: unknown 60024, another enterprise's 60025, named twice 60028. */
function checkNumbers(
  named: Named[],
  found: NumberedAsset[],
  enterpriseId: number,
): Array<Named & { asset: NumberedAsset }> {
  const byNum = new Map(found.map((a) => [a.assetNum, a]));
  const checked = named.map((n) => {
    const asset = byNum.get(n.assetNum);
    if (!asset) throw refuse(MemberCode.assetNotFound, `${n.path}: no asset ${n.assetNum}`);
    if (asset.enterpriseId !== enterpriseId) {
      throw refuse(
        MemberCode.otherCustomer,
        `${n.path}: ${n.assetNum} belongs to a customer outside this enterprise`,
      );
    }
    return { ...n, asset };
  });
  const seen = new Set<string>();
  for (const n of checked) {
    if (seen.has(n.assetNum)) {
      throw refuse(MemberCode.assignedTwice, `${n.path}: ${n.assetNum} is listed more than once`);
    }
    seen.add(n.assetNum);
  }
  return checked;
}
