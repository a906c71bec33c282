import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import type { AssetNumbersService } from '../asset-numbers/asset-numbers.service.js';
import { applyDeleteAsset } from './delete-asset.js';
import { applyDeleteProduct } from './delete-product.js';
import { applyNewBuy } from './new-buy.js';
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
 * Applies the orders one after another in the caller's transaction, so a later order sees what an
 * earlier one did. The first refusal stops the batch as an OrderFailure naming that order; the
 * caller rolls everything back.
 */
export async function applyOrders(
  trx: Db,
  assetNumbers: AssetNumbersService,
  batch: BatchToApply,
): Promise<void> {
  const repositories = repositoriesOn(trx);
  for (const accepted of batch.orders) {
    try {
      await applyOrder({
        ...repositories,
        assetNumbers,
        appId: batch.appId,
        channelCode: batch.channelCode,
        channelOrderId: batch.channelOrderId,
        acceptedAt: batch.acceptedAt,
        ...accepted,
      });
    } catch (error) {
      if (error instanceof KeywardError) throw new OrderFailure(accepted.licenseOrderId, error);
      throw error;
    }
  }
}
