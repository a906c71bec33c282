import type { MerchandiseRow, ProductRow } from './member-assets.repository.js';

/** A product feature as order op 5 stored it: member op 7's extension instance. */
export interface ProductExtendView {
  featureCode: string | null;
  featureName: string | null;
  featureValue: string | null;
  featureValueType: string | null;
  trial: number;
  trialEndDate: number | null;
}

/** The spec's "Product instance". */
export interface ProductInstanceView {
  id: string;
  licenseType: string;
  customerId: string;
  assetId: string | null;
  assetInsId: string | null;
  merchandiseInsId: string | null;
  assetNum: string | null;
  productUri: string;
  gmsPid: string;
  appKey: string;
  productName: string;
  channelCode: string;
  licenseOrderId: string;
  channelOrderId: string;
  limitStartTime: number | null;
  limitEndTime: number | null;
  limitAmount: number | null;
  limitConcurrent: number | null;
  limitTimeDuration: number | null;
  trial: number;
  trialEndDate: number | null;
  limitType: 'basic' | 'feature';
  prodDefExtend: boolean;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  createTime: number;
  updateTime: number | null;
  activateFlag: boolean;
  crmProductId: string;
  productExtendInstanceList: ProductExtendView[];
}

/** The spec's "Merchandise node": null where a node has no children or no products. */
export interface MerchandiseNodeView {
  id: string;
  licenseType: string;
  merchandiseNum: string;
  merchandiseName: string;
  parentId: string | null;
  parentMerchandiseNum: string | null;
  customerId: string;
  licenseOrderId: string;
  channelOrderId: string;
  createTime: number;
  updateTime: number;
  channelCode: string;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  children: MerchandiseNodeView[] | null;
  productInstanceList: ProductInstanceView[] | null;
}

export interface AssetProductsView {
  productInstanceList: ProductInstanceView[];
  children: MerchandiseNodeView[];
}

/** Fields the spec types as a plain String carry "" when the order gave nothing. */
const text = (value: string | null): string => value ?? '';

const textOrNull = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const intOrNull = (value: unknown): number | null => (typeof value === 'number' ? value : null);

function extendView(feature: unknown): ProductExtendView {
  const f = (typeof feature === 'object' && feature !== null ? feature : {}) as Record<string, unknown>;
  return {
    featureCode: textOrNull(f.featureCode),
    featureName: textOrNull(f.featureName),
    featureValue: textOrNull(f.featureValue),
    featureValueType: textOrNull(f.featureValueType),
    trial: intOrNull(f.trial) ?? 0,
    trialEndDate: intOrNull(f.trialEndDate),
  };
}

/**
 * A product lent to a lock shows there with the one node the lending moved. A product with
 * features is limited by them (`feature`), else by its basic limits.
 */
export function productView(p: ProductRow): ProductInstanceView {
  const extendList = p.features.map(extendView);
  return {
    id: String(p.id),
    licenseType: p.licenseType,
    customerId: p.customerId,
    assetId: p.assetId,
    // Assets have no separate instances here: an asset is its own instance.
    assetInsId: null,
    merchandiseInsId: p.merchandiseInsId === null ? null : String(p.merchandiseInsId),
    assetNum: p.assetNum,
    productUri: text(p.productUri),
    gmsPid: text(p.gmsPid),
    appKey: text(p.appKey),
    productName: text(p.productName),
    channelCode: text(p.channelCode),
    licenseOrderId: p.licenseOrderId,
    channelOrderId: text(p.channelOrderId),
    limitStartTime: p.limitStartTime,
    limitEndTime: p.limitEndTime,
    limitAmount: p.limitAmount,
    limitConcurrent: p.lentIn ? 1 : p.limitConcurrent,
    limitTimeDuration: p.limitTimeDuration,
    trial: p.trial,
    trialEndDate: p.trialEndDate,
    limitType: extendList.length > 0 ? 'feature' : 'basic',
    prodDefExtend: extendList.length > 0,
    timeDurationExpression: p.timeDurationExpression,
    srcLicenseOrderId: p.srcLicenseOrderId,
    createTime: p.createdAt,
    updateTime: p.updatedAt,
    // Activation is reported by a client session; none reports it yet.
    activateFlag: false,
    crmProductId: text(p.crmProductId),
    productExtendInstanceList: extendList,
  };
}

interface Building {
  row: MerchandiseRow;
  children: Building[];
  products: ProductInstanceView[];
  /** The viewed asset's own merchandise is shown even when empty. */
  keep: boolean;
}

function nodeView(b: Building, children: MerchandiseNodeView[]): MerchandiseNodeView {
  return {
    id: String(b.row.id),
    licenseType: b.row.licenseType,
    merchandiseNum: text(b.row.merchandiseNum),
    merchandiseName: text(b.row.merchandiseName),
    parentId: b.row.parentId === null ? null : String(b.row.parentId),
    parentMerchandiseNum: b.row.parentMerchandiseNum,
    customerId: b.row.customerId,
    licenseOrderId: b.row.licenseOrderId,
    channelOrderId: text(b.row.channelOrderId),
    createTime: b.row.createdAt,
    updateTime: b.row.updatedAt,
    channelCode: text(b.row.channelCode),
    timeDurationExpression: b.row.timeDurationExpression,
    srcLicenseOrderId: b.row.srcLicenseOrderId,
    children: children.length > 0 ? children : null,
    productInstanceList: b.products.length > 0 ? b.products : null,
  };
}

/**
 * Member op 7's answer for one asset: products outside any merchandise at the top, merchandise
 * forests below with their products. Merchandise of other assets (a lent lock shows what was lent
 * to it) appears only where it holds a lent product. Rows arrive in id order, so a parent always
 * comes before its children; one that lost its parent is shown at the top rather than dropped.
 */
export function assetTree(
  assetId: string,
  merchandise: MerchandiseRow[],
  products: ProductRow[],
): AssetProductsView {
  const nodes = new Map<number, Building>();
  const roots: Building[] = [];
  for (const row of merchandise) {
    const node: Building = { row, children: [], products: [], keep: row.assetId === assetId };
    nodes.set(row.id, node);
    const parent = row.parentId === null ? undefined : nodes.get(row.parentId);
    if (parent) parent.children.push(node);
    else roots.push(node);
  }
  const top: ProductInstanceView[] = [];
  for (const p of products) {
    const holder = p.merchandiseInsId === null ? undefined : nodes.get(p.merchandiseInsId);
    if (holder) holder.products.push(productView(p));
    else top.push(productView(p));
  }
  // Children before parents (ids grow downwards): a node is settled before its parent asks, and
  // no recursion, so a deep tree cannot exhaust the stack.
  const views = new Map<Building, MerchandiseNodeView>();
  for (const node of [...nodes.values()].reverse()) {
    const children = node.children.flatMap((c) => views.get(c) ?? []);
    if (node.keep || node.products.length > 0 || children.length > 0)
      views.set(node, nodeView(node, children));
  }
  return { productInstanceList: top, children: roots.flatMap((r) => views.get(r) ?? []) };
}
