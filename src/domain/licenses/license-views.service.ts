import type { Db } from '../../db/client.js';
import {
  LicenseViewsRepository,
  type AssetView,
  type LeaseView,
  type LicenseCursor,
  type LicenseView,
  type MachineRow,
  type MemberView,
} from './license-views.repository.js';

export type { AssetView, LeaseView, LicenseCursor, LicenseView, MachineRow, MemberView };

/** Licenses of an enterprise on one page of its console page. */
export const ENTERPRISE_LICENSES_PAGE = 50;
/** Machines listed on an asset's or an employee's page. */
export const MACHINES_SHOWN = 50;

/**
 * What the operator's console shows of an enterprise, an asset, a lease and an employee: the same
 * tables the runtime and the order service write, read by their indexes (license-views.repository).
 */
export class LicenseViewsService {
  private readonly repo: LicenseViewsRepository;

  constructor(
    db: Db,
    private readonly now: () => number = Date.now,
  ) {
    this.repo = new LicenseViewsRepository(db);
  }

  /** A page of an enterprise's licenses after `after`, with whether another page follows. */
  async enterpriseLicenses(
    enterpriseGlobalId: string,
    after?: LicenseCursor,
  ): Promise<{ licenses: LicenseView[]; next: LicenseCursor | undefined }> {
    const rows = await this.repo.enterpriseLicenses({
      enterpriseGlobalId,
      now: new Date(this.now()),
      ...(after === undefined ? {} : { after }),
      limit: ENTERPRISE_LICENSES_PAGE + 1,
    });
    const licenses = rows.slice(0, ENTERPRISE_LICENSES_PAGE);
    const last = licenses.at(-1);
    return {
      licenses,
      next:
        rows.length > ENTERPRISE_LICENSES_PAGE && last !== undefined
          ? [last.assetNum, last.productId]
          : undefined,
    };
  }

  enterpriseTotals(enterpriseGlobalId: string): Promise<{ licenses: number; assets: number }> {
    return this.repo.enterpriseTotals(enterpriseGlobalId);
  }

  enterpriseMachines(enterpriseGlobalId: string): Promise<{ online: number; offline: number }> {
    return this.repo.enterpriseMachines(enterpriseGlobalId, new Date(this.now()));
  }

  /** An asset and the machines that ran its licenses; undefined when no asset has the number. */
  async asset(assetNum: string): Promise<{ asset: AssetView; machines: MachineRow[] } | undefined> {
    const now = new Date(this.now());
    const asset = await this.repo.asset(assetNum, now);
    if (asset === undefined) return undefined;
    return { asset, machines: await this.repo.assetMachines(asset.assetId, now, MACHINES_SHOWN) };
  }

  /** The assets an order batch put licenses on (its page links each). */
  assetsOfBatch(batchId: string): Promise<string[]> {
    return this.repo.assetsOfBatch(batchId, MACHINES_SHOWN);
  }

  lease(leaseId: string): Promise<LeaseView | undefined> {
    return this.repo.lease(leaseId);
  }

  /** Whether a lease holds its seat at this moment, as check-out judges it. */
  holding(lease: LeaseView): boolean {
    const now = this.now();
    return (
      (lease.endedAt === null && lease.expiresAt.getTime() > now) ||
      (lease.seatHeldUntil !== null && lease.seatHeldUntil.getTime() > now)
    );
  }

  async member(globalId: string): Promise<{ member: MemberView; machines: MachineRow[] } | undefined> {
    const member = await this.repo.member(globalId);
    if (member === undefined) return undefined;
    return {
      member,
      machines: await this.repo.memberMachines(globalId, new Date(this.now()), MACHINES_SHOWN),
    };
  }
}
