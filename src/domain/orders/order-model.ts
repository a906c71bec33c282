/** The closed sets of order op 5 (order-service.md, License order request). */
export const LICENSE_TYPES = [
  'normal_unrecover_usbkey',
  'normal_recover_usbkey',
  'normal_unrecover_lan_usbkey',
  'normal_recover_lan_usbkey',
  'identity_usbkey',
  'identity_lan_usbkey',
  'softkey',
  'lan_softkey',
  'product_entity',
  'cloud_account',
  'cloud_customer',
  'cloud_personal',
  'lk_product_usbkey',
  'lk_auth_usbkey',
] as const;
export type LicenseType = (typeof LICENSE_TYPES)[number];

export const ORDER_TYPES = ['new_buy', 'delete_asset', 'delete_product'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const SYNC_MODES = ['sync', 'async'] as const;
export type SyncMode = (typeof SYNC_MODES)[number];

export const CUSTOMER_TYPES = ['personal', 'company'] as const;
export type CustomerType = (typeof CUSTOMER_TYPES)[number];

/** Cloud authorizations: srcLicenseOrderId on revocations, fresh numbers when none are given. */
export const CLOUD_LICENSE_TYPES: readonly LicenseType[] = [
  'cloud_account',
  'cloud_customer',
  'cloud_personal',
];

export function isCloud(licenseType: LicenseType): boolean {
  return CLOUD_LICENSE_TYPES.includes(licenseType);
}

// What a caller sends, after the HTTP schema: absent and null both mean "not given".
type In<T> = T | null | undefined;

export interface FeatureInput {
  featureCode?: In<string>;
  featureName?: In<string>;
  featureValue?: In<string>;
  featureValueType?: In<string>;
  trial?: In<number>;
  trialEndDate?: In<number | string>;
}

export interface ProductInput {
  crmProductId?: In<string>;
  parentCrmProductId?: In<string>;
  productUri?: In<string>;
  productName?: In<string>;
  gmsPid?: In<string>;
  appKey?: In<string>;
  productType?: In<string>;
  limitStartDate?: In<number>;
  limitEndDate?: In<number>;
  limitConcurrent?: In<number>;
  limitTimeDuration?: In<number>;
  /** An addition to the spec: the consumption allowance the license runtime draws down. */
  limitAmount?: In<number>;
  strictMatchWhenDelete?: In<boolean>;
  trial?: In<number>;
  trialEndDate?: In<number>;
  passwords?: In<string[]>;
  timeUnit?: In<string>;
  timeUnitQuantity?: In<number>;
  timeDurationExpression?: In<string>;
  srcLicenseOrderId?: In<string>;
  productFeatures?: In<FeatureInput[]>;
}

export interface MerchandiseInput {
  crmProductId?: In<string>;
  parentCrmProductId?: In<string>;
  merchandiseNum?: In<string>;
  merchandiseName?: In<string>;
  parentMerchandiseNum?: In<string>;
  timeDurationExpression?: In<string>;
  children?: In<MerchandiseInput[]>;
  licenseOrderProductList?: In<ProductInput[]>;
}

export interface AssetInput {
  assetNos?: In<string[]>;
  assetExtendList?: In<Array<{ extendCode: string; extendValue?: In<string> }>>;
  limitStartDate?: In<number>;
  limitEndDate?: In<number>;
  borrowedUsbKey?: In<boolean>;
  transferedAssetNum?: In<boolean>;
  products?: In<ProductInput[]>;
  merchandises?: In<MerchandiseInput[]>;
}

export interface OrderInput {
  sequence: number;
  customerId?: In<string>;
  crmCustomerId?: In<string>;
  customerName?: In<string>;
  channelCustomerId?: In<string>;
  adminName?: In<string>;
  adminAccount?: In<string>;
  adminEmail?: In<string>;
  adminCellNumber?: In<string>;
  passwordMobile?: In<string>;
  address?: In<string>;
  customerType?: In<CustomerType>;
  branchCode?: In<string>;
  branchName?: In<string>;
  enterpriseGlobalId?: In<string>;
  srcLicenseOrderId?: In<string>;
  licenseType: LicenseType;
  orderType: OrderType;
  assets?: In<AssetInput[]>;
}

export interface BatchInput {
  /** Left out only when every order names its customer by customerId (batch-channel.ts). */
  channelCode?: string;
  channelOrderId: string;
  syncMode: SyncMode;
  orderList: OrderInput[];
}

// The normalized batch: every field present (null when not given), only known fields. It is what
// the idempotency hash covers, what an async batch stores, and what the appliers read.

export interface Feature {
  featureCode: string | null;
  featureName: string | null;
  featureValue: string | null;
  featureValueType: string | null;
  trial: number;
  /** Epoch milliseconds, whichever form the caller used. */
  trialEndDate: number | null;
}

export interface Product {
  crmProductId: string | null;
  parentCrmProductId: string | null;
  productUri: string | null;
  productName: string | null;
  gmsPid: string | null;
  appKey: string | null;
  productType: string | null;
  limitStartDate: number | null;
  limitEndDate: number | null;
  limitConcurrent: number | null;
  limitTimeDuration: number | null;
  /**
   * Present only when given, unlike its neighbours: a field added after batches were first stored,
   * so a body without it hashes as it did before (a retry across an upgrade is still the same
   * body), and an async payload stored before it reads the same as one that left it out.
   */
  limitAmount?: number;
  strictMatchWhenDelete: boolean;
  trial: number;
  trialEndDate: number | null;
  passwords: string[];
  timeUnit: string | null;
  timeUnitQuantity: number | null;
  timeDurationExpression: string | null;
  srcLicenseOrderId: string | null;
  productFeatures: Feature[];
}

export interface Merchandise {
  crmProductId: string | null;
  parentCrmProductId: string | null;
  merchandiseNum: string | null;
  merchandiseName: string | null;
  parentMerchandiseNum: string | null;
  timeDurationExpression: string | null;
  children: Merchandise[];
  products: Product[];
}

export interface AssetExtend {
  extendCode: string;
  extendValue: string | null;
}

export interface Asset {
  assetNos: string[];
  extends: AssetExtend[];
  limitStartDate: number | null;
  limitEndDate: number | null;
  /** null: not given, an existing asset keeps its flag. */
  borrowedUsbKey: boolean | null;
  transferedAssetNum: boolean | null;
  products: Product[];
  merchandises: Merchandise[];
}

export interface CustomerFields {
  customerId: string | null;
  crmCustomerId: string | null;
  customerName: string | null;
  channelCustomerId: string | null;
  passwordMobile: string | null;
  address: string | null;
  customerType: CustomerType | null;
  branchCode: string | null;
  branchName: string | null;
  enterpriseGlobalId: string | null;
}

export interface Order extends CustomerFields {
  sequence: number;
  srcLicenseOrderId: string | null;
  licenseType: LicenseType;
  orderType: OrderType;
  assets: Asset[];
}

export interface Batch {
  channelCode: string;
  channelOrderId: string;
  syncMode: SyncMode;
  orders: Order[];
}

/** A batch as normalized from its body, before a channel left out is taken from its customers. */
export type BatchDraft = Omit<Batch, 'channelCode'> & { channelCode: string | null };

/** An order of a batch with what accepting it decided: its id and its customer. */
export interface AcceptedOrder {
  order: Order;
  licenseOrderId: string;
  customerId: string;
}

/** The answer of order op 5, per order. */
export interface OrderResultItem {
  sequence: number;
  licenseOrderId: string;
  customerId: string;
}
