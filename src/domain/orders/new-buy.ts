import { KeywardError } from '../../errors/keyward-error.js';
import { isKeywardFormat } from '../asset-numbers/asset-numbers.service.js';
import { LendingRepository } from '../lending/lending.repository.js';
import { newGlobalId } from '../shared/ids.js';
import type { NewAsset, NewMerchandise, NewProduct, OwnedNewAsset } from './order-assets.repository.js';
import type { OrderContext } from './order-context.js';
import { invalid, OrderFailure, orderPath } from './order-errors.js';
import type { Asset, Order, Product } from './order-model.js';
import { isCloud } from './order-model.js';
import { effectiveExpression, merchandiseVisits, productVisits } from './order-tree.js';
import { addTimeExpression } from './time-expression.js';

const NOT_ISSUED = 'was not issued to this application by shellnums (order op 9)';
const UNAVAILABLE = 'is not available to this application';

interface Placed {
  asset: Asset;
  path: string;
  /** Parallel arrays: the number and where the caller wrote it (null for a freshly issued one). */
  assetNums: string[];
  numPaths: Array<string | null>;
}

/** One order of a run with the numbers its assets land on. */
interface Planned {
  ctx: OrderContext;
  placed: Placed[];
}

/** A refusal belongs to the order it concerns: the batch answers with that order's sequence. */
function failing(ctx: OrderContext, error: unknown): unknown {
  return error instanceof KeywardError ? new OrderFailure(ctx.licenseOrderId, error) : error;
}

function freshNeeded(order: Order): number {
  return isCloud(order.licenseType) ? order.assets.filter((a) => a.assetNos.length === 0).length : 0;
}

/**
 * Cloud types without numbers get one fresh number per asset, as order op 9 issues them: drawn for
 * the whole run at once and handed out in order, as order after order would have drawn them.
 */
async function placeAssets(run: OrderContext[]): Promise<Planned[]> {
  const wanted = run.map((ctx) => freshNeeded(ctx.order));
  const total = wanted.reduce((sum, n) => sum + n, 0);
  const first = run[wanted.findIndex((n) => n > 0)] ?? (run[0] as OrderContext);
  let fresh: string[] = [];
  if (total > 0) {
    try {
      fresh = await first.assetNumbers.issue(total, first.appId, first.trx);
    } catch (error) {
      throw failing(first, error);
    }
  }
  return run.map((ctx) => {
    const path = orderPath(ctx.order.sequence);
    const placed = ctx.order.assets.map((asset, i) => {
      const own = asset.assetNos.length > 0;
      const assetNums = own ? asset.assetNos : [fresh.shift() as string];
      return {
        asset,
        path: `${path}.assets[${i}]`,
        assetNums,
        numPaths: own ? assetNums.map((_, j) => `${path}.assets[${i}].assetNos[${j}]`) : [null],
      };
    });
    return { ctx, placed };
  });
}

/**
 * Of the numbers the caller wrote and this run just created, those in Keyward's format that op 9
 * did not issue to the app (numbers drawn for the run were issued to it a moment ago).
 */
async function unissued(
  first: OrderContext,
  rows: Array<{ named: boolean; row: OwnedNewAsset }>,
  inserted: Set<string>,
): Promise<Set<string>> {
  const nums = rows
    .filter(({ named, row }) => named && inserted.has(row.assetNum) && isKeywardFormat(row.assetNum))
    .map(({ row }) => row.assetNum);
  return first.assetNumbers.notIssuedTo(first.appId, nums, first.trx);
}

/**
 * Creates the numbers nobody holds (one in Keyward's format only if op 9 issued it to the app, so
 * no tenant can take numbers the sequence will hand to another); the others must already be their
 * order's customer's, of its license type (the first order, in sequence, that breaks this refuses
 * the batch). Returns the asset id of every number.
 */
async function ensureAssets(planned: Planned[]): Promise<Map<string, string>> {
  const first = (planned[0] as Planned).ctx;
  const { assets, trx } = first;
  const rows = planned.flatMap(({ ctx, placed }) =>
    placed.flatMap(({ asset, assetNums, numPaths, path }) =>
      assetNums.map((assetNum, j) => ({
        ctx,
        at: numPaths[j] ?? path,
        named: numPaths[j] !== null,
        row: {
          id: newGlobalId(),
          assetNum,
          customerId: ctx.customerId,
          licenseType: ctx.order.licenseType,
          limitStartTime: asset.limitStartDate,
          limitEndTime: asset.limitEndDate,
          borrowedUsbKey: asset.borrowedUsbKey,
          transferedAssetNum: asset.transferedAssetNum,
        } satisfies OwnedNewAsset,
      })),
    ),
  );
  const inserted = new Set(await assets.insertIfAbsent(rows.map((r) => r.row)));
  // A refusal rolls the inserts back with the rest of the batch.
  const notIssued = await unissued(first, rows, inserted);
  const existing = await assets.lockByNums(rows.map((r) => r.row.assetNum).filter((n) => !inserted.has(n)));
  const byNum = new Map(existing.map((a) => [a.assetNum, a]));
  const ids = new Map<string, string>();
  const refreshed: NewAsset[] = [];
  for (const { ctx, at, row } of rows) {
    const held = byNum.get(row.assetNum);
    if (!held) {
      if (notIssued.has(row.assetNum)) throw failing(ctx, invalid(at, NOT_ISSUED));
      ids.set(row.assetNum, row.id);
      continue;
    }
    if (held.customerId !== row.customerId) {
      // Another channel's number is answered as one that does not exist here (DOMAIN.md §2): in
      // Keyward's format exactly as a number op 9 never issued to the app; a foreign lock's number
      // cannot be created twice, so it is only said to be unavailable, not whose it is.
      if (held.channelCode !== ctx.channelCode) {
        throw failing(ctx, invalid(at, isKeywardFormat(row.assetNum) ? NOT_ISSUED : UNAVAILABLE));
      }
      throw failing(ctx, invalid(at, 'belongs to another customer'));
    }
    if (held.licenseType !== row.licenseType) {
      throw failing(ctx, invalid(at, `is a ${held.licenseType} asset, not ${row.licenseType}`));
    }
    ids.set(row.assetNum, held.id);
    refreshed.push({ ...row, id: held.id });
  }
  await assets.refresh(refreshed);
  // An asset that stops being a lent lock gives back what was lent to it; one that becomes a lent
  // lock cannot stay lent out itself (lent locks are never lent).
  const lending = new LendingRepository(trx);
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
    licenseOrderId: ctx.licenseOrderId,
    customerId: ctx.customerId,
    licenseType: ctx.order.licenseType,
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
    limitAmount: product.limitAmount ?? null,
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
 * new_buy for a run of orders that share no asset number (see applyOrders): assets created or
 * refreshed, then extensions, merchandise forests and product instances, each kind in one
 * statement for the whole run. Orders that share no asset cannot see each other's writes, so this
 * does what applying them one after another would, in a handful of statements.
 */
export async function applyNewBuys(run: OrderContext[]): Promise<void> {
  if (run.length === 0) return;
  const { assets, channelOrderId, channelCode } = run[0] as OrderContext;
  const planned = await placeAssets(run);
  const assetIds = await ensureAssets(planned);

  const extendRows = planned.flatMap(({ placed }) =>
    placed.flatMap(({ asset, assetNums }) =>
      assetNums.flatMap((n) => asset.extends.map((e) => ({ assetId: assetIds.get(n) as string, ...e }))),
    ),
  );
  await assets.upsertExtends(extendRows);

  const trees = planned.flatMap(({ ctx, placed }) =>
    placed.map((p) => {
      const merchandise = merchandiseVisits(p.asset, p.path);
      return { ctx, ...p, merchandise, products: productVisits(p.asset, p.path, merchandise) };
    }),
  );
  const ids = await assets.allocateMerchandiseIds(
    trees.reduce((sum, t) => sum + t.merchandise.length * t.assetNums.length, 0),
  );
  let nextId = 0;
  const merchandiseRows: NewMerchandise[] = [];
  const productRows: NewProduct[] = [];
  for (const tree of trees) {
    const { ctx } = tree;
    for (const assetNum of tree.assetNums) {
      const assetId = assetIds.get(assetNum) as string;
      // Visits list parents first, so a child's parent id is always drawn already.
      const drawn = tree.merchandise.map(() => ids[nextId++] as number);
      tree.merchandise.forEach(({ node, parent }, k) =>
        merchandiseRows.push({
          licenseOrderId: ctx.licenseOrderId,
          customerId: ctx.customerId,
          licenseType: ctx.order.licenseType,
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
  const owner = { channelOrderId, channelCode };
  await assets.insertMerchandise(merchandiseRows, owner);
  await assets.insertProducts(productRows, owner);
}

/** new_buy of one order. */
export function applyNewBuy(ctx: OrderContext): Promise<void> {
  return applyNewBuys([ctx]);
}
