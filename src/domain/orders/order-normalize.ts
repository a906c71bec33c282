import { optionalMobile, optionalText } from '../enterprises/customer-input.js';
import { invalid, orderPath } from './order-errors.js';
import type {
  Asset,
  AssetInput,
  BatchDraft,
  BatchInput,
  Feature,
  FeatureInput,
  Merchandise,
  MerchandiseInput,
  Order,
  OrderInput,
  Product,
  ProductInput,
} from './order-model.js';

const orNull = <T>(value: T | null | undefined): T | null => (value === undefined ? null : value);

/** Identifiers and names: trimmed, and blank means not given, as channel systems send "" for absent. */
const text = (value: string | null | undefined): string | null => optionalText(value) ?? null;

const ISO_8601 = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A `Date` field: epoch milliseconds as a number or digits, or ISO 8601 (UTC unless it says). */
function epochOf(value: number | string | null | undefined, path: string): number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  if (/^[0-9]{1,16}$/.test(value)) return Number(value);
  const iso = ISO_8601.test(value)
    ? Date.parse(/[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`)
    : NaN;
  if (Number.isNaN(iso)) throw invalid(path, 'must be ISO 8601 or epoch milliseconds');
  return iso;
}

function feature(input: FeatureInput, path: string): Feature {
  return {
    featureCode: text(input.featureCode),
    featureName: text(input.featureName),
    featureValue: orNull(input.featureValue),
    featureValueType: text(input.featureValueType),
    trial: input.trial ?? 0,
    trialEndDate: epochOf(input.trialEndDate, `${path}.trialEndDate`),
  };
}

function product(input: ProductInput, path: string): Product {
  return {
    crmProductId: text(input.crmProductId),
    parentCrmProductId: text(input.parentCrmProductId),
    productUri: text(input.productUri),
    productName: text(input.productName),
    gmsPid: text(input.gmsPid),
    appKey: text(input.appKey),
    productType: text(input.productType),
    limitStartDate: orNull(input.limitStartDate),
    limitEndDate: orNull(input.limitEndDate),
    limitConcurrent: orNull(input.limitConcurrent),
    limitTimeDuration: orNull(input.limitTimeDuration),
    ...(input.limitAmount === null || input.limitAmount === undefined
      ? {}
      : { limitAmount: input.limitAmount }),
    strictMatchWhenDelete: input.strictMatchWhenDelete ?? false,
    trial: input.trial ?? 0,
    trialEndDate: orNull(input.trialEndDate),
    passwords: input.passwords ?? [],
    timeUnit: text(input.timeUnit),
    timeUnitQuantity: orNull(input.timeUnitQuantity),
    timeDurationExpression: text(input.timeDurationExpression),
    srcLicenseOrderId: text(input.srcLicenseOrderId),
    productFeatures: (input.productFeatures ?? []).map((f, i) => feature(f, `${path}.productFeatures[${i}]`)),
  };
}

function products(list: ProductInput[] | null | undefined, path: string): Product[] {
  return (list ?? []).map((p, i) => product(p, `${path}[${i}]`));
}

function merchandise(input: MerchandiseInput, path: string): Merchandise {
  return {
    crmProductId: text(input.crmProductId),
    parentCrmProductId: text(input.parentCrmProductId),
    merchandiseNum: text(input.merchandiseNum),
    merchandiseName: text(input.merchandiseName),
    parentMerchandiseNum: text(input.parentMerchandiseNum),
    timeDurationExpression: text(input.timeDurationExpression),
    children: (input.children ?? []).map((c, i) => merchandise(c, `${path}.children[${i}]`)),
    products: products(input.licenseOrderProductList, `${path}.licenseOrderProductList`),
  };
}

function asset(input: AssetInput, path: string): Asset {
  // A code given twice keeps its last value, as a later field would overwrite an earlier one.
  const extendsByCode = new Map<string, string | null>();
  for (const e of input.assetExtendList ?? []) extendsByCode.set(e.extendCode, orNull(e.extendValue));
  return {
    assetNos: input.assetNos ?? [],
    extends: [...extendsByCode].map(([extendCode, extendValue]) => ({ extendCode, extendValue })),
    limitStartDate: orNull(input.limitStartDate),
    limitEndDate: orNull(input.limitEndDate),
    borrowedUsbKey: orNull(input.borrowedUsbKey),
    transferedAssetNum: orNull(input.transferedAssetNum),
    products: products(input.products, `${path}.products`),
    merchandises: (input.merchandises ?? []).map((m, i) => merchandise(m, `${path}.merchandises[${i}]`)),
  };
}

function order(input: OrderInput): Order {
  const path = orderPath(input.sequence);
  return {
    sequence: input.sequence,
    customerId: text(input.customerId),
    crmCustomerId: text(input.crmCustomerId),
    customerName: text(input.customerName),
    channelCustomerId: text(input.channelCustomerId),
    passwordMobile: optionalMobile(`${path}.passwordMobile`, input.passwordMobile) ?? null,
    address: text(input.address),
    customerType: orNull(input.customerType),
    branchCode: text(input.branchCode),
    branchName: text(input.branchName),
    enterpriseGlobalId: text(input.enterpriseGlobalId),
    srcLicenseOrderId: text(input.srcLicenseOrderId),
    licenseType: input.licenseType,
    orderType: input.orderType,
    assets: (input.assets ?? []).map((a, i) => asset(a, `${path}.assets[${i}]`)),
  };
}

/**
 * The request as the rest of the order code sees it: only the fields the spec defines, each present.
 * The administrator fields (adminName …) are accepted but have no effect, so they are dropped here.
 */
export function normalizeBatch(input: BatchInput): BatchDraft {
  return {
    channelCode: input.channelCode ?? null,
    channelOrderId: input.channelOrderId,
    syncMode: input.syncMode,
    orders: input.orderList.map(order),
  };
}
