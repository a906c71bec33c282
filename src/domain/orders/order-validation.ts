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

/**
 * Checks one asset entry; returns the rows it will write. Everything the entry carries is written
 * once per asset number: the asset row, its extensions, its merchandise and products, and each
 * product's features and passwords (stored inside the product row, but copied all the same).
 */
function checkAsset(order: Order, asset: Asset, path: string, seen: Map<string, string>): number {
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
  // A revocation updates the listed assets (and what they hold, which this call did not send).
  if (order.orderType === 'delete_asset') return asset.assetNos.length;

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
  if (order.orderType === 'delete_product') return Math.max(asset.assetNos.length, 1) * products.length;
  const copied = products.reduce(
    (entries, { product }) => entries + product.productFeatures.length + product.passwords.length,
    1 + asset.extends.length + merchandise.length + products.length,
  );
  // A cloud asset without numbers gets one fresh number.
  return Math.max(asset.assetNos.length, 1) * copied;
}

function checkOrder(order: Order): number {
  const path = orderPath(order.sequence);
  if (order.customerId === null && order.channelCustomerId === null && order.crmCustomerId === null) {
    throw invalid(`${path}.customerId`, 'one of customerId, channelCustomerId or crmCustomerId is required');
  }
  if (order.orderType !== 'new_buy' && isCloud(order.licenseType) && order.srcLicenseOrderId === null) {
    throw invalid(`${path}.srcLicenseOrderId`, `is required to revoke a ${order.licenseType}`);
  }
  if (order.assets.length === 0) throw invalid(`${path}.assets`, 'must not be empty');
  const seen = new Map<string, string>();
  return order.assets.reduce(
    (rows, asset, i) => rows + checkAsset(order, asset, `${path}.assets[${i}]`, seen),
    0,
  );
}

/**
 * The rules that need no stored data; checked before anything is written. `maxRows` bounds the
 * rows one call may write: each array is capped, but an asset entry is copied onto every one of
 * its asset numbers, so a small body could otherwise write millions of rows.
 */
export function checkBatch(batch: Pick<Batch, 'orders'>, maxRows: number): void {
  const sequences = new Set<number>();
  batch.orders.forEach((order, i) => {
    if (sequences.has(order.sequence)) {
      throw invalid(`orderList[${i}].sequence`, `${order.sequence} is used by another order`);
    }
    sequences.add(order.sequence);
  });
  let rows = 0;
  for (const order of batch.orders) rows += checkOrder(order);
  if (rows > maxRows) {
    throw invalid(
      'orderList',
      `a call may write at most ${maxRows} rows (assets, extensions, merchandise, products and their features and passwords, counted once per asset number; this one: ${rows})`,
    );
  }
}
