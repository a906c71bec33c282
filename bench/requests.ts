import { randomBytes } from 'node:crypto';
import type { RequestShape } from './load.js';
import { channelCustomerId, customerId, idOf, lockableAssets } from './seed.js';
import {
  BATCH_SHAPE,
  CHANNEL,
  LARGE_TENANTS,
  MEMBERS_PER_ADD,
  SMALL_TENANTS,
  TARGET_TENANT,
} from './settings.js';
import type { Session } from './session.js';

// The requests each scenario sends. Every builder is called once per request, so bodies that
// must be unique (orders, members, lock numbers) never repeat within a run.

const ORDER = '/order/api/order/v1';
const ME = '/me/api/v1';
const JSON_BODY = { 'content-type': 'application/json' };
const runTag = randomBytes(4).toString('hex');

const orderHeaders = (s: Session) => ({ authorization: `Bearer ${s.appToken}` });
const memberHeaders = (s: Session) => ({ authorization: `Bearer ${s.appToken}`, usertoken: s.userToken });
const targetEnterprise = idOf(1, TARGET_TENANT);

/** R1: one primary-key SELECT behind a bare route. */
export const referenceRead = (): RequestShape => ({
  method: 'GET',
  path: () => `/ref/customers/${customerId(TARGET_TENANT)}`,
  nonce: false,
  accept: (status, body) => status === 200 && body.includes(customerId(TARGET_TENANT)),
});

/** Order op 3: the enterprise behind a channel customer, all its customers. */
export const queryEnterprises = (s: Session): RequestShape => ({
  method: 'GET',
  path: () =>
    `${ORDER}/enterprise/user/query?channelCode=${CHANNEL}&channelCustomerId=${channelCustomerId(TARGET_TENANT)}&defaultCustomer=N`,
  headers: orderHeaders(s),
});

/** Member op 5: page 1 of 10. */
export const listMembers = (s: Session): RequestShape => ({
  method: 'GET',
  path: () => `${ME}/enterprise/${targetEnterprise}/members?pageNum=1&pageSize=10`,
  headers: memberHeaders(s),
});

/** Member op 6: the enterprise's 500 asset numbers. */
export const listAssetNums = (s: Session): RequestShape => ({
  method: 'GET',
  path: () => `${ME}/enterprise/${targetEnterprise}/asset/assetNums`,
  headers: memberHeaders(s),
});

/**
 * Order op 6 with `size` numbers a call, each call on locks no earlier call touched, so every call
 * really disables them and audits each one. `offset` keeps scenarios apart.
 */
export function lockAssets(s: Session, size: number, offset: number): RequestShape {
  const pool = lockableAssets(LARGE_TENANTS);
  let next = offset;
  return {
    method: 'POST',
    path: () => `${ORDER}/asset/lock`,
    headers: { ...orderHeaders(s), ...JSON_BODY },
    body: () => {
      // Only a shrunken data set (BENCH_TENANTS) wraps around, onto locks already disabled.
      const assetNums = Array.from({ length: size }, (_, i) => pool.at((next + i) % pool.count));
      next += size;
      return JSON.stringify({ assetNums, operatorIdentity: 'bench@keyward.example' });
    },
    accept: (status, body) => status === 200 && body.startsWith('{"code":0,') && !/"status":[234]/.test(body),
  };
}

/** Order op 9. */
export const shellnums = (s: Session, size: number): RequestShape => ({
  method: 'POST',
  path: () => `${ORDER}/shellnums`,
  headers: { ...orderHeaders(s), ...JSON_BODY },
  body: () => JSON.stringify({ size }),
});

let batchNo = 0;

/** One product as a CRM sends it; `key` makes its CRM id unique. */
export function productOf(key: string, p: number) {
  return {
    crmProductId: `P-${key}-${p}`,
    productUri: `gms-${2000 + p}`,
    productName: `Product ${p}`,
    gmsPid: `gms-${2000 + p}`,
    productType: 'tool',
    limitStartDate: 1_700_000_000_000,
    limitEndDate: 4_000_000_000_000,
    limitConcurrent: 3,
  };
}

/** batchOrder: 50 new_buy orders × 4 fresh assets × 5 products, spread over the small tenants. */
export function batchOrder(s: Session): RequestShape {
  const { orders, assetsPerOrder, productsPerAsset } = BATCH_SHAPE;
  return {
    method: 'POST',
    path: () => `${ORDER}/licenseOrder/batchOrder?appKey=${s.appKey}`,
    headers: { ...orderHeaders(s), ...JSON_BODY },
    body: () => {
      batchNo += 1;
      const batch = `${runTag}-${batchNo}`;
      return JSON.stringify({
        channelCode: CHANNEL,
        channelOrderId: `bench-${batch}`,
        syncMode: 'sync',
        orderList: Array.from({ length: orders }, (_, o) => ({
          sequence: o,
          customerId: customerId((o % SMALL_TENANTS) + 1),
          orderType: 'new_buy',
          licenseType: 'softkey',
          assets: Array.from({ length: assetsPerOrder }, (_, a) => ({
            assetNos: [`BO-${batch}-${o}-${a}`],
            products: Array.from({ length: productsPerAsset }, (_, p) => productOf(`${batch}-${o}-${a}`, p)),
          })),
        })),
      });
    },
  };
}

let memberBatch = 0;

/** Member op 1: 100 new employees into the target enterprise. */
export function addMembers(s: Session): RequestShape {
  return {
    method: 'POST',
    path: () => `${ME}/enterprise/${targetEnterprise}/member`,
    headers: { ...memberHeaders(s), ...JSON_BODY },
    body: () => {
      memberBatch += 1;
      return JSON.stringify({
        userList: Array.from({ length: MEMBERS_PER_ADD }, (_, i) => ({
          userName: `u${runTag}n${memberBatch}x${i}`,
          password: `Pass-${memberBatch}-${i}`,
          departmentId: i % 10,
          name: `Employee ${memberBatch}-${i}`,
          remark: 'added by the benchmark',
          passwordMobile: `1380000${String(i).padStart(4, '0')}`,
        })),
      });
    },
  };
}
