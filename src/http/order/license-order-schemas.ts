import { Type, type TSchema } from 'typebox';
import type { Config } from '../../config.js';
import {
  CUSTOMER_TYPES,
  LICENSE_TYPES,
  ORDER_TYPES,
  SYNC_MODES,
  type MerchandiseInput,
} from '../../domain/orders/order-model.js';
import { IntLike, Nullable, StringEnum } from '../schema-types.js';
import { Bounds } from './enterprise-schemas.js';

/**
 * Field bounds of order op 5 (the spec states none; listed in docs/reference.md). Customer fields share
 * the bounds of ops 1–4, since op 5 creates customers too.
 */
export const ORDER_BOUNDS = {
  code: 64,
  id: 128,
  text: 255,
  longText: 4000,
  assetNum: /^[A-Za-z0-9_-]{1,64}$/.source,
  /** Levels of a merchandise tree: the recursive schema's validator recurses once per level. */
  merchandiseDepth: 32,
} as const;

const entries = (value: unknown, key: string): unknown[] => {
  const list =
    value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
  return Array.isArray(list) ? list : [];
};

/**
 * The first asset (`orderList[0].assets[2].merchandises`) whose merchandise tree nests deeper than
 * ORDER_BOUNDS.merchandiseDepth, or undefined. Runs on the raw body before the schema, which would
 * exhaust the stack on a tree thousands of levels deep, and walks it with a stack of its own.
 */
export function tooDeepMerchandise(body: unknown): string | undefined {
  const orders = entries(body, 'orderList');
  for (const [i, order] of orders.entries()) {
    for (const [j, asset] of entries(order, 'assets').entries()) {
      const pending: Array<[unknown, number]> = entries(asset, 'merchandises').map((m) => [m, 1]);
      for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
        const [node, depth] = next;
        if (depth > ORDER_BOUNDS.merchandiseDepth) return `orderList[${i}].assets[${j}].merchandises`;
        for (const child of entries(node, 'children')) pending.push([child, depth + 1]);
      }
    }
  }
  return undefined;
}

export const MERCHANDISE_SCHEMA_ID = 'LicenseOrderMerchandise';

const Text = (maxLength: number = ORDER_BOUNDS.text) => Type.Optional(Nullable(Type.String({ maxLength })));
const Long = () => Type.Optional(Nullable(IntLike({ minimum: 0 })));
const Int32 = () => Type.Optional(Nullable(IntLike({ minimum: 0, maximum: 2_147_483_647 })));
const Trial = () => Type.Optional(Nullable(IntLike({ minimum: 0, maximum: 1 })));
const Flag = () => Type.Optional(Nullable(Type.Boolean()));

/** Every order carries a customerId that is not blank (normalization takes blank as not given). */
const EVERY_ORDER_NAMES_CUSTOMER = {
  properties: {
    orderList: {
      items: { required: ['customerId'], properties: { customerId: { type: 'string', pattern: '\\S' } } },
    },
  },
};

/**
 * The body of order op 5. Every array is capped at `arrayElements`, the order list at
 * `ordersPerCall`; the merchandise tree refers to itself by `$id` so it may nest to any depth.
 */
export function batchOrderSchemas(limits: Config['limits']) {
  const List = <T extends TSchema>(items: T) => Type.Array(items, { maxItems: limits.arrayElements });
  const OptionalList = <T extends TSchema>(items: T) => Type.Optional(Nullable(List(items)));

  const Feature = Type.Object({
    featureCode: Text(),
    featureName: Text(),
    featureValue: Text(ORDER_BOUNDS.longText),
    featureValueType: Text(),
    trial: Trial(),
    trialEndDate: Type.Optional(
      Nullable(
        Type.Union([IntLike({ minimum: 0 }), Type.String({ maxLength: 40, description: 'ISO 8601' })]),
      ),
    ),
  });

  const Product = Type.Object({
    crmProductId: Text(ORDER_BOUNDS.id),
    parentCrmProductId: Text(ORDER_BOUNDS.id),
    productUri: Text(),
    productName: Text(),
    gmsPid: Text(),
    appKey: Text(),
    productType: Text(ORDER_BOUNDS.code),
    limitStartDate: Long(),
    limitEndDate: Long(),
    limitConcurrent: Int32(),
    limitAmount: Int32(),
    limitTimeDuration: Long(),
    strictMatchWhenDelete: Flag(),
    trial: Trial(),
    trialEndDate: Long(),
    passwords: OptionalList(Type.String({ maxLength: ORDER_BOUNDS.longText })),
    timeUnit: Text(ORDER_BOUNDS.code),
    timeUnitQuantity: Int32(),
    timeDurationExpression: Text(ORDER_BOUNDS.code),
    srcLicenseOrderId: Text(ORDER_BOUNDS.id),
    productFeatures: OptionalList(Feature),
  });

  const merchandiseRef = Type.Unsafe<MerchandiseInput>({ $ref: `${MERCHANDISE_SCHEMA_ID}#` });
  const merchandise = Type.Object(
    {
      crmProductId: Text(ORDER_BOUNDS.id),
      parentCrmProductId: Text(ORDER_BOUNDS.id),
      merchandiseNum: Text(),
      merchandiseName: Text(),
      parentMerchandiseNum: Text(),
      timeDurationExpression: Text(ORDER_BOUNDS.code),
      children: OptionalList(merchandiseRef),
      licenseOrderProductList: OptionalList(Product),
    },
    { $id: MERCHANDISE_SCHEMA_ID },
  );

  const Asset = Type.Object({
    assetNos: OptionalList(Type.String({ pattern: ORDER_BOUNDS.assetNum })),
    assetExtendList: OptionalList(
      Type.Object({
        extendCode: Type.String({ minLength: 1, maxLength: ORDER_BOUNDS.code }),
        extendValue: Text(ORDER_BOUNDS.longText),
      }),
    ),
    limitStartDate: Long(),
    limitEndDate: Long(),
    borrowedUsbKey: Flag(),
    transferedAssetNum: Flag(),
    products: OptionalList(Product),
    merchandises: OptionalList(merchandiseRef),
  });

  const Order = Type.Object({
    sequence: IntLike({ minimum: 0, maximum: 2_147_483_647 }),
    customerId: Text(ORDER_BOUNDS.id),
    crmCustomerId: Text(Bounds.crmCustomerId.maxLength),
    customerName: Text(Bounds.name.maxLength),
    channelCustomerId: Text(Bounds.channelCustomerId.maxLength),
    adminName: Text(),
    adminAccount: Text(),
    adminEmail: Text(),
    adminCellNumber: Text(ORDER_BOUNDS.code),
    passwordMobile: Text(Bounds.passwordMobile.maxLength),
    address: Text(Bounds.address.maxLength),
    customerType: Type.Optional(Nullable(StringEnum(CUSTOMER_TYPES))),
    branchCode: Text(ORDER_BOUNDS.code),
    branchName: Text(Bounds.branchName.maxLength),
    enterpriseGlobalId: Text(ORDER_BOUNDS.id),
    srcLicenseOrderId: Text(ORDER_BOUNDS.id),
    licenseType: StringEnum(LICENSE_TYPES),
    orderType: StringEnum(ORDER_TYPES),
    assets: OptionalList(Asset),
  });

  const body = Type.Object(
    {
      channelCode: Type.Optional(
        Type.String({
          ...Bounds.channelCode,
          description:
            "required unless every order gives customerId; left out, it is the channel of those customers, which must be one of the application's channels and all the same",
        }),
      ),
      channelOrderId: Type.String({ minLength: 1, maxLength: ORDER_BOUNDS.id }),
      syncMode: StringEnum(SYNC_MODES),
      orderList: Type.Array(Order, { minItems: 1, maxItems: limits.ordersPerCall }),
    },
    { if: { not: EVERY_ORDER_NAMES_CUSTOMER }, then: { required: ['channelCode'] } },
  );

  return { merchandise, body };
}

export const OrderResultItem = Type.Object({
  sequence: Type.Integer(),
  licenseOrderId: Type.String(),
  customerId: Type.String(),
});
