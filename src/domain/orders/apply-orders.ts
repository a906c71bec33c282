import type { Db } from '../../db/client.js';
import type { AuditChange } from '../audit/audit-actions.js';
import { KeywardError } from '../../errors/keyward-error.js';
import type { AssetNumbersService } from '../asset-numbers/asset-numbers.service.js';
import { applyDeleteAsset } from './delete-asset.js';
import { applyDeleteProduct } from './delete-product.js';
import { applyNewBuy, applyNewBuys } from './new-buy.js';
import { repositoriesOn, type OrderContext } from './order-context.js';
import { OrderFailure } from './order-errors.js';
import type { AcceptedOrder } from './order-model.js';

function applyOrder(ctx: OrderContext): Promise<void> {
  switch (ctx.order.orderType) {
    case 'new_buy':
      return applyNewBuy(ctx);
    case 'delete_asset':
      return applyDeleteAsset(ctx);
    case 'delete_product':
      return applyDeleteProduct(ctx);
  }
}

export interface BatchToApply {
  appId: string;
  channelCode: string;
  channelOrderId: string;
  acceptedAt: number;
  orders: AcceptedOrder[];
}

/**
 * Consecutive new_buy orders that share no asset number: none can see what another writes, so
 * they are applied together (applyNewBuys). Every other order is a run of its own.
 */
export function runsOf(orders: OrderContext[]): OrderContext[][] {
  const runs: OrderContext[][] = [];
  let run: OrderContext[] = [];
  let numbers = new Set<string>();
  for (const ctx of orders) {
    const own = ctx.order.assets.flatMap((a) => a.assetNos);
    const joins =
      ctx.order.orderType === 'new_buy' &&
      run.length > 0 &&
      (run[0] as OrderContext).order.orderType === 'new_buy' &&
      own.every((n) => !numbers.has(n));
    if (!joins && run.length > 0) {
      runs.push(run);
      run = [];
      numbers = new Set();
    }
    run.push(ctx);
    for (const n of own) numbers.add(n);
  }
  if (run.length > 0) runs.push(run);
  return runs;
}

/**
 * Applies the orders in the caller's transaction as if one after another, so a later order sees
 * what an earlier one did. The first refusal stops the batch as an OrderFailure naming that order;
 * the caller rolls everything back. Answers the audit rows of what the orders changed beyond
 * themselves, for the caller to write with its own.
 */
export async function applyOrders(
  trx: Db,
  assetNumbers: AssetNumbersService,
  batch: BatchToApply,
): Promise<AuditChange[]> {
  const repositories = repositoriesOn(trx);
  const audit: AuditChange[] = [];
  const contexts = batch.orders.map((accepted) => ({
    ...repositories,
    assetNumbers,
    appId: batch.appId,
    channelCode: batch.channelCode,
    channelOrderId: batch.channelOrderId,
    acceptedAt: batch.acceptedAt,
    ...accepted,
    audit,
  }));
  for (const run of runsOf(contexts)) {
    const first = run[0] as OrderContext;
    try {
      await (run.length > 1 ? applyNewBuys(run) : applyOrder(first));
    } catch (error) {
      if (error instanceof KeywardError) throw new OrderFailure(first.licenseOrderId, error);
      throw error;
    }
  }
  return audit;
}
