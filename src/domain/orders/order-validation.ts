import { invalid, orderPath } from './order-errors.js';
import { isCloud, type Asset, type Batch, type Order } from './order-model.js';
import { merchandiseVisits, productVisits } from './order-tree.js';
import { isTimeExpression } from './time-expression.js';

function checkWindow(start: number | null, end: number | null, path: string): void {
  if (start !== null && end !== null && end < start) {
    throw invalid(`${path}.limitEndDate`, 'must not be before limitStartDate');
  }
}

function checkExpression(expression: string | null, path: string): void {
  if (expression !== null && !isTimeExpression(expression)) {
    throw invalid(`${path}.timeDurationExpression`, 'must be y-m-d, e.g. 1-0-0');
  }
}

function checkAsset(order: Order, asset: Asset, path: string, seen: Map<string, string>): void {
  if (asset.assetNos.length === 0 && !(order.orderType === 'new_buy' && isCloud(order.licenseType))) {
    throw invalid(`${path}.assetNos`, 'must not be empty unless a cloud license type is bought');
  }
  asset.assetNos.forEach((assetNo, j) => {
    const first = seen.get(assetNo);
    if (first !== undefined)
      throw invalid(`${path}.assetNos[${j}]`, `is listed twice in this order (${first})`);
    seen.set(assetNo, `${path}.assetNos[${j}]`);
  });
  checkWindow(asset.limitStartDate, asset.limitEndDate, path);
  if (order.orderType === 'delete_asset') return;

  const merchandise = order.orderType === 'new_buy' ? merchandiseVisits(asset, path) : [];
  const products = productVisits(asset, path, merchandise);
  // Rule 4; on new_buy a product inside merchandise counts ("products and/or merchandises").
  if (products.length === 0) {
    throw invalid(`${path}.products`, 'must not be empty unless orderType is delete_asset');
  }
  for (const m of merchandise) checkExpression(m.node.timeDurationExpression, m.path);
  for (const { product, path: at } of products) {
    if (order.orderType === 'delete_product') {
      if (product.crmProductId === null && product.productUri === null) {
        throw invalid(at, 'crmProductId or productUri is required to find the product');
      }
    } else if (product.productUri === null && product.gmsPid === null && product.appKey === null) {
      throw invalid(`${at}.productUri`, 'is required (or gmsPid or appKey)');
    }
    checkWindow(product.limitStartDate, product.limitEndDate, at);
    checkExpression(product.timeDurationExpression, at);
  }
}

function checkOrder(order: Order): void {
  const path = orderPath(order.sequence);
  if (order.customerId === null && order.channelCustomerId === null && order.crmCustomerId === null) {
    throw invalid(`${path}.customerId`, 'one of customerId, channelCustomerId or crmCustomerId is required');
  }
  if (order.orderType !== 'new_buy' && isCloud(order.licenseType) && order.srcLicenseOrderId === null) {
    throw invalid(`${path}.srcLicenseOrderId`, `is required to revoke a ${order.licenseType}`);
  }
  if (order.assets.length === 0) throw invalid(`${path}.assets`, 'must not be empty');
  const seen = new Map<string, string>();
  order.assets.forEach((asset, i) => checkAsset(order, asset, `${path}.assets[${i}]`, seen));
}

/** The rules that need no stored data; checked before anything is written. */
export function checkBatch(batch: Batch): void {
  const sequences = new Set<number>();
  batch.orders.forEach((order, i) => {
    if (sequences.has(order.sequence)) {
      throw invalid(`orderList[${i}].sequence`, `${order.sequence} is used by another order`);
    }
    sequences.add(order.sequence);
  });
  for (const order of batch.orders) checkOrder(order);
}
