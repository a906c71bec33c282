import { LendingRepository } from '../lending/lending.repository.js';
import { newGlobalId } from '../shared/ids.js';
import type { NewAsset, NewMerchandise, NewProduct } from './order-assets.repository.js';
import type { OrderContext } from './order-context.js';
import { invalid, orderPath } from './order-errors.js';
import type { Asset, Product } from './order-model.js';
import { isCloud } from './order-model.js';
import { effectiveExpression, merchandiseVisits, productVisits } from './order-tree.js';
import { addTimeExpression } from './time-expression.js';

interface Placed {
  asset: Asset;
  path: string;
  /** Parallel arrays: the number and where the caller wrote it (null for a freshly issued one). */
  assetNums: string[];
  numPaths: Array<string | null>;
}

/** Cloud types without numbers get one fresh number per asset, as order op 9 issues them. */
async function placeAssets(ctx: OrderContext): Promise<Placed[]> {
  const path = orderPath(ctx.order.sequence);
  const wanted = ctx.order.assets.filter((a) => a.assetNos.length === 0).length;
  const fresh =
    wanted > 0 && isCloud(ctx.order.licenseType)
      ? await ctx.assetNumbers.issue(wanted, ctx.appId, ctx.trx)
      : [];
  return ctx.order.assets.map((asset, i) => {
    const own = asset.assetNos.length > 0;
    const assetNums = own ? asset.assetNos : [fresh.shift() as string];
    return {
      asset,
      path: `${path}.assets[${i}]`,
      assetNums,
      numPaths: own ? assetNums.map((_, j) => `${path}.assets[${i}].assetNos[${j}]`) : [null],
    };
  });
}

/**
 * Creates the numbers nobody holds; the others must already be this customer's, of this license
 * type. Returns the asset id of every number.
 */
async function ensureAssets(ctx: OrderContext, placed: Placed[]): Promise<Map<string, string>> {
  const { order, customerId } = ctx;
  const rows: NewAsset[] = placed.flatMap(({ asset, assetNums }) =>
    assetNums.map((assetNum) => ({
      id: newGlobalId(),
      assetNum,
      limitStartTime: asset.limitStartDate,
      limitEndTime: asset.limitEndDate,
      borrowedUsbKey: asset.borrowedUsbKey,
      transferedAssetNum: asset.transferedAssetNum,
    })),
  );
  const inserted = new Set(
    await ctx.assets.insertIfAbsent(rows, { customerId, licenseType: order.licenseType }),
  );
  const existing = await ctx.assets.lockByNums(rows.map((r) => r.assetNum).filter((n) => !inserted.has(n)));
  const byNum = new Map(existing.map((a) => [a.assetNum, a]));
  const pathOf = new Map(
    placed.flatMap((p) => p.assetNums.map((n, j) => [n, p.numPaths[j] ?? p.path] as const)),
  );
  const ids = new Map<string, string>();
  const refreshed: NewAsset[] = [];
  for (const row of rows) {
    const held = byNum.get(row.assetNum);
    if (!held) {
      ids.set(row.assetNum, row.id);
      continue;
    }
    const at = pathOf.get(row.assetNum) ?? orderPath(order.sequence);
    if (held.customerId !== customerId) throw invalid(at, 'belongs to another customer');
    if (held.licenseType !== order.licenseType) {
      throw invalid(at, `is a ${held.licenseType} asset, not ${order.licenseType}`);
    }
    ids.set(row.assetNum, held.id);
    refreshed.push({ ...row, id: held.id });
  }
  await ctx.assets.refresh(refreshed);
  // An asset that stops being a lent lock gives back what was lent to it; one that becomes a lent
  // lock cannot stay lent out itself (lent locks are never lent).
  const lending = new LendingRepository(ctx.trx);
  await lending.endForLocks(refreshed.filter((a) => a.borrowedUsbKey === false).map((a) => a.id));
  await lending.returnAssets(refreshed.filter((a) => a.borrowedUsbKey === true).map((a) => a.id));
  return ids;
}

function productRow(
  ctx: OrderContext,
  product: Product,
  expression: string | null,
  assetId: string,
  merchandiseInsId: number | null,
): NewProduct {
  // An end not given follows from the expression, counted from the start (the acceptance time
  // when no start is given either, which then becomes the start).
  const start =
    product.limitStartDate ?? (expression !== null && product.limitEndDate === null ? ctx.acceptedAt : null);
  const end =
    product.limitEndDate ??
    (expression !== null && start !== null ? addTimeExpression(start, expression) : null);
  return {
    assetId,
    merchandiseInsId,
    crmProductId: product.crmProductId,
    parentCrmProductId: product.parentCrmProductId,
    productUri: product.productUri ?? product.gmsPid ?? product.appKey,
    gmsPid: product.gmsPid,
    appKey: product.appKey,
    productName: product.productName,
    productType: product.productType,
    limitStartTime: start,
    limitEndTime: end,
    limitConcurrent: product.limitConcurrent,
    limitTimeDuration: product.limitTimeDuration,
    trial: product.trial,
    trialEndDate: product.trialEndDate,
    timeUnit: product.timeUnit,
    timeUnitQuantity: product.timeUnitQuantity,
    timeDurationExpression: product.timeDurationExpression,
    srcLicenseOrderId: product.srcLicenseOrderId,
    passwords: product.passwords,
    features: product.productFeatures,
  };
}

/**
 * new_buy: assets created or refreshed, then extensions, merchandise forests and product instances,
 * each kind in one statement for the whole order.
 */
export async function applyNewBuy(ctx: OrderContext): Promise<void> {
  const placed = await placeAssets(ctx);
  const assetIds = await ensureAssets(ctx, placed);

  const extendRows = placed.flatMap(({ asset, assetNums }) =>
    assetNums.flatMap((n) => asset.extends.map((e) => ({ assetId: assetIds.get(n) as string, ...e }))),
  );
  await ctx.assets.upsertExtends(extendRows);

  const trees = placed.map((p) => {
    const merchandise = merchandiseVisits(p.asset, p.path);
    return { ...p, merchandise, products: productVisits(p.asset, p.path, merchandise) };
  });
  const ids = await ctx.assets.allocateMerchandiseIds(
    trees.reduce((sum, t) => sum + t.merchandise.length * t.assetNums.length, 0),
  );
  let nextId = 0;
  const merchandiseRows: NewMerchandise[] = [];
  const productRows: NewProduct[] = [];
  for (const tree of trees) {
    for (const assetNum of tree.assetNums) {
      const assetId = assetIds.get(assetNum) as string;
      // Visits list parents first, so a child's parent id is always drawn already.
      const drawn = tree.merchandise.map(() => ids[nextId++] as number);
      tree.merchandise.forEach(({ node, parent }, k) =>
        merchandiseRows.push({
          id: drawn[k] as number,
          assetId,
          parentId: parent === null ? null : (drawn[parent] as number),
          crmProductId: node.crmProductId,
          parentCrmProductId: node.parentCrmProductId,
          merchandiseNum: node.merchandiseNum,
          merchandiseName: node.merchandiseName,
          parentMerchandiseNum: node.parentMerchandiseNum,
          timeDurationExpression: node.timeDurationExpression,
          srcLicenseOrderId: ctx.order.srcLicenseOrderId,
        }),
      );
      for (const visit of tree.products) {
        const merchandiseId = visit.merchandise === null ? null : (drawn[visit.merchandise] as number);
        productRows.push(
          productRow(
            ctx,
            visit.product,
            effectiveExpression(visit, tree.merchandise),
            assetId,
            merchandiseId,
          ),
        );
      }
    }
  }
  const owner = {
    licenseOrderId: ctx.licenseOrderId,
    channelOrderId: ctx.channelOrderId,
    channelCode: ctx.channelCode,
    customerId: ctx.customerId,
    licenseType: ctx.order.licenseType,
  };
  await ctx.assets.insertMerchandise(merchandiseRows, owner);
  await ctx.assets.insertProducts(productRows, owner);
}
