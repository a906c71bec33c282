import { releasedLockChanges } from '../lending/lending-audit.js';
import { LendingRepository } from '../lending/lending.repository.js';
import type { OrderContext } from './order-context.js';
import { invalid } from './order-errors.js';
import { checkSourceOrder, lockTargets } from './revocation.js';

/**
 * delete_asset: the listed assets are revoked with every product, merchandise and assignment on
 * them, and leave every lending, lent out or lent to. With srcLicenseOrderId each asset must hold
 * something of that order, so a stale or mistaken number cannot take down an asset the order never
 * touched.
 */
export async function applyDeleteAsset(ctx: OrderContext): Promise<void> {
  const src = await checkSourceOrder(ctx);
  const targets = await lockTargets(ctx);
  const ids = targets.map((t) => t.asset.id);
  if (src !== null) {
    const holding = await ctx.assets.holdingOrder(ids, src);
    const stranger = targets.find((t) => !holding.has(t.asset.id));
    if (stranger) throw invalid(stranger.path, `holds nothing of license order ${src}`);
  }
  await ctx.assets.revokeAssets(ids);
  const released = await new LendingRepository(ctx.trx).endForAssets(ids);
  ctx.audit.push(...releasedLockChanges(released, 'asset_revoked', { licenseOrderId: ctx.licenseOrderId }));
}
