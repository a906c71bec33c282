import type { Db } from '../../db/client.js';
import type { AuditChange } from '../audit/audit-actions.js';
import type { AssetNumbersService } from '../asset-numbers/asset-numbers.service.js';
import { OrderAssetsRepository } from './order-assets.repository.js';
import { OrderBatchesRepository } from './order-batches.repository.js';
import type { Order } from './order-model.js';

/** What applying one order needs: the transaction, who and when, and the order's identity. */
export interface OrderContext {
  trx: Db;
  assets: OrderAssetsRepository;
  batches: OrderBatchesRepository;
  assetNumbers: AssetNumbersService;
  appId: string;
  channelCode: string;
  channelOrderId: string;
  /** When the batch was accepted: the start of a product whose start is not given. */
  acceptedAt: number;
  order: Order;
  licenseOrderId: string;
  customerId: string;
  /** Where appliers put the audit rows of what an order changes beyond itself (lendings ended). */
  audit: AuditChange[];
}

export function repositoriesOn(trx: Db): Pick<OrderContext, 'trx' | 'assets' | 'batches'> {
  return { trx, assets: new OrderAssetsRepository(trx), batches: new OrderBatchesRepository(trx) };
}
