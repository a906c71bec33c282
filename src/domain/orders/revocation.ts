import type { LockedAsset } from './order-assets.repository.js';
import type { OrderContext } from './order-context.js';
import { invalid, orderPath } from './order-errors.js';

export interface TargetAsset {
  asset: LockedAsset;
  /** Index into the order's assets, and the field that named the number. */
  assetIndex: number;
  path: string;
}

/**
 * The live assets a revocation names, locked, each checked to be this customer's and of the
 * order's license type. Another customer's asset reads as no asset at all.
 */
export async function lockTargets(ctx: OrderContext): Promise<TargetAsset[]> {
  const { order } = ctx;
  const base = orderPath(order.sequence);
  const named = order.assets.flatMap((asset, i) =>
    asset.assetNos.map((assetNum, j) => ({
      assetNum,
      assetIndex: i,
      path: `${base}.assets[${i}].assetNos[${j}]`,
    })),
  );
  const locked = new Map(
    (await ctx.assets.lockByNums(named.map((n) => n.assetNum))).map((a) => [a.assetNum, a]),
  );
  return named.map(({ assetNum, assetIndex, path }) => {
    const asset = locked.get(assetNum);
    if (!asset || asset.customerId !== ctx.customerId || asset.revoked) {
      throw invalid(path, 'no such asset of this customer');
    }
    if (asset.licenseType !== order.licenseType) {
      throw invalid(path, `is a ${asset.licenseType} asset, not ${order.licenseType}`);
    }
    return { asset, assetIndex, path };
  });
}

/** srcLicenseOrderId, when given, must be an order of this customer: it scopes what is revoked. */
export async function checkSourceOrder(ctx: OrderContext): Promise<string | null> {
  const src = ctx.order.srcLicenseOrderId;
  if (src !== null && !(await ctx.batches.customerHasOrder(src, ctx.customerId))) {
    throw invalid(
      `${orderPath(ctx.order.sequence)}.srcLicenseOrderId`,
      'no such license order of this customer',
    );
  }
  return src;
}
