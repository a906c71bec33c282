import { Type } from 'typebox';
import type { MerchandiseNodeView } from '../../domain/member-assets/asset-tree.js';
import { Nullable, StringEnum } from '../schema-types.js';

const Millis = (description = 'epoch milliseconds') => Type.Integer({ description });
/** A number the order may have left out: null then, since 0 would claim a value. */
const OptionalNumber = (description: string) => Nullable(Type.Integer({ description }));
/** The spec types these as String: "" when the order gave none. */
const Text = (description?: string) => Type.String(description === undefined ? {} : { description });

/** Member ops 9, 10 and return name the member alone; the enterprise is the caller's. */
export const MemberOnlyParams = Type.Object({
  memberGlobalId: Type.String({ minLength: 1, maxLength: 100 }),
});

/** Asset numbers as order op 5 accepts them. */
export const AssetNums = (description: string) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 1000, description });

export const LockNum = Type.String({ minLength: 1, maxLength: 64, description: 'the lent lock number' });

/** Member op 6's item. */
export const AssetNumItem = Type.Object({
  assetNum: Type.String(),
  assetId: Type.String(),
  cloudAccountGlobalId: Nullable(Type.String({ description: 'the member it is assigned to' })),
  borrowedFlag: Type.Boolean({ description: 'its entitlements are lent to a lent lock' }),
  onlineFlag: Type.Boolean({ description: 'in online use; false until sessions report it' }),
});

/** Member op 8's item. */
export const LentLockItem = Type.Object({
  assetId: Type.String(),
  assetNum: Type.String({ description: 'the lent lock number' }),
  borrowedFlag: Type.Boolean({ description: 'lent now' }),
  cloudAccountGlobalId: Nullable(Type.String({ description: 'the member it is lent to' })),
});

const ProductExtendInstance = Type.Object({
  featureCode: Nullable(Type.String()),
  featureName: Nullable(Type.String()),
  featureValue: Nullable(Type.String()),
  featureValueType: Nullable(Type.String()),
  trial: Type.Integer({ description: '1 trial, 0 not' }),
  trialEndDate: Nullable(Millis()),
});

/** The spec's "Product instance", field for field. */
export const ProductInstance = Type.Object({
  id: Type.String(),
  licenseType: Type.String(),
  customerId: Type.String(),
  assetId: Nullable(Type.String()),
  assetInsId: Nullable(Type.String()),
  merchandiseInsId: Nullable(Type.String()),
  assetNum: Nullable(Type.String()),
  productUri: Text(),
  gmsPid: Text(),
  appKey: Text(),
  productName: Text(),
  channelCode: Text(),
  licenseOrderId: Type.String(),
  channelOrderId: Text(),
  limitStartTime: OptionalNumber('validity start, epoch milliseconds'),
  limitEndTime: OptionalNumber('validity end, epoch milliseconds'),
  limitAmount: OptionalNumber('consumption amount'),
  limitConcurrent: OptionalNumber('concurrent nodes; 1 for a product lent to this lock'),
  limitTimeDuration: OptionalNumber('accumulated usage duration'),
  trial: Type.Integer({ description: '1 trial, 0 not' }),
  trialEndDate: Nullable(Millis()),
  limitType: StringEnum(['basic', 'feature'] as const),
  prodDefExtend: Type.Boolean(),
  timeDurationExpression: Nullable(Type.String()),
  srcLicenseOrderId: Nullable(Type.String()),
  createTime: Millis(),
  updateTime: Nullable(Millis()),
  activateFlag: Type.Boolean(),
  crmProductId: Text(),
  productExtendInstanceList: Type.Array(ProductExtendInstance, {
    description: "the product's features (productFeatures of its order)",
  }),
});

export const MERCHANDISE_NODE_SCHEMA_ID = 'MemberMerchandiseNode';

const nodeRef = Type.Unsafe<MerchandiseNodeView>({ $ref: `${MERCHANDISE_NODE_SCHEMA_ID}#` });

/** The spec's "Merchandise node", nested to any depth by `$id`. */
export const MerchandiseNode = Type.Object(
  {
    id: Type.String(),
    licenseType: Type.String(),
    merchandiseNum: Text('package number'),
    merchandiseName: Text(),
    parentId: Nullable(Type.String()),
    parentMerchandiseNum: Nullable(Type.String()),
    customerId: Type.String(),
    licenseOrderId: Type.String(),
    channelOrderId: Text(),
    createTime: Millis(),
    updateTime: Millis(),
    channelCode: Text(),
    timeDurationExpression: Nullable(Type.String()),
    srcLicenseOrderId: Nullable(Type.String()),
    children: Nullable(Type.Array(nodeRef)),
    productInstanceList: Nullable(Type.Array(ProductInstance)),
  },
  { $id: MERCHANDISE_NODE_SCHEMA_ID },
);

/** Member op 7's `data`. */
export const AssetProducts = Type.Object({
  productInstanceList: Type.Array(ProductInstance),
  children: Type.Array(MerchandiseNode),
});
