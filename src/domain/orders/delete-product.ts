import { releasedLockChanges } from '../lending/lending-audit.js';
import { LendingRepository } from '../lending/lending.repository.js';
import type { ActiveProduct } from './order-assets.repository.js';
import type { OrderContext } from './order-context.js';
import { invalid, orderPath } from './order-errors.js';
import type { Product } from './order-model.js';
import { checkSourceOrder, lockTargets } from './revocation.js';

/**
 * By crmProductId when given, else by productUri; strictMatchWhenDelete also demands the same
 * start, end and node count (absent matches absent).
 */
function matches(wanted: Product, held: ActiveProduct): boolean {
  const same =
    wanted.crmProductId !== null
      ? held.crmProductId === wanted.crmProductId
      : held.productUri === wanted.productUri;
  if (!same || !wanted.strictMatchWhenDelete) return same;
  return (
    held.limitStartTime === wanted.limitStartDate &&
    held.limitEndTime === wanted.limitEndDate &&
    held.limitConcurrent === wanted.limitConcurrent
  );
}

/**
 * delete_product: on each listed asset every listed product must match at least one live
 * instance of this customer (of srcLicenseOrderId's order when given, else of any order); all
 * matches are revoked, and leave any lent lock they were lent to.
 */
export async function applyDeleteProduct(ctx: OrderContext): Promise<void> {
  const src = await checkSourceOrder(ctx);
  const targets = await lockTargets(ctx);
  const held = await ctx.assets.lockActiveProducts(
    targets.map((t) => t.asset.id),
    ctx.customerId,
    src,
  );
  const byAsset = new Map<string, ActiveProduct[]>();
  for (const p of held) {
    const list = byAsset.get(p.assetId);
    if (list) list.push(p);
    else byAsset.set(p.assetId, [p]);
  }
  const base = orderPath(ctx.order.sequence);
  const revoked = new Set<number>();
  for (const target of targets) {
    const candidates = byAsset.get(target.asset.id) ?? [];
    const asset = ctx.order.assets[target.assetIndex];
    asset?.products.forEach((wanted, k) => {
      const found = candidates.filter((p) => matches(wanted, p));
      if (found.length === 0) {
        throw invalid(
          `${base}.assets[${target.assetIndex}].products[${k}]`,
          `matches no product on asset ${target.asset.assetNum}${src === null ? '' : ` from license order ${src}`}`,
        );
      }
      for (const p of found) revoked.add(p.id);
    });
  }
  await ctx.assets.revokeProducts([...revoked]);
  const released = await new LendingRepository(ctx.trx).dropProducts([...revoked]);
  ctx.audit.push(...releasedLockChanges(released, 'product_revoked', { licenseOrderId: ctx.licenseOrderId }));
}
