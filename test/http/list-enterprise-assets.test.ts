import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomersRepository } from '../../src/domain/customers/customers.repository.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { ORDER_PREFIX } from '../../src/http/surface.js';
import type { AssetRecord } from '../../src/domain/assets/assets.service.js';
import { orderGuardSuite } from '../support/guard-suite.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import type { TestEnterprise } from '../support/fixtures.js';
import {
  assetNum,
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  product,
  submit,
  visibleEnterprise,
  type OrderResult,
  type OrderTenant,
} from './order-helpers.js';

let h: Harness;
let tenant: OrderTenant;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
});
afterAll(async () => h.close());

async function list(enterpriseGlobalId: string, query: Record<string, string> = {}, t: OrderTenant = tenant) {
  return orderCall(h, t, 'GET', `/asset/${enterpriseGlobalId}/list`, undefined, query);
}

async function records(
  enterpriseGlobalId: string,
  query: Record<string, string> = {},
): Promise<AssetRecord[]> {
  const response = await list(enterpriseGlobalId, query);
  expect(response.statusCode, response.body).toBe(200);
  return (response.json() as { data: AssetRecord[] }).data;
}

/** Buys one asset of `licenseType` for a new customer of the enterprise. */
async function buyFor(
  enterprise: TestEnterprise,
  licenseType: string,
  asset: Record<string, unknown> = {},
): Promise<{ num: string; order: OrderResult }> {
  const num = assetNum('');
  const [order] = await submit(
    h,
    tenant,
    batch(tenant, [
      newBuy({
        enterpriseGlobalId: enterprise.globalId,
        licenseType,
        assets: [{ assetNos: [num], products: [product()], ...asset }],
      }),
    ]),
  );
  return { num, order: order as OrderResult };
}

describe('order op 8: enterprise virtual assets', () => {
  it("lists the enterprise's cloud_customer assets with every field of the asset record", async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const { num, order } = await buyFor(enterprise, 'cloud_customer', {
      limitStartDate: 1_700_000_000_000,
      limitEndDate: 4_000_000_000_000,
      assetExtendList: [
        { extendCode: 'seats', extendValue: '20' },
        { extendCode: 'edition', extendValue: 'pro' },
      ],
    });
    await buyFor(enterprise, 'cloud_account');
    await buyFor(enterprise, 'normal_recover_usbkey');

    const [record, ...rest] = await records(enterprise.globalId);
    expect(rest).toEqual([]);
    expect(record).toEqual({
      id: expect.any(String),
      licenseType: 'cloud_customer',
      assetNum: num,
      grantable: true,
      customerId: order.customerId,
      keyShellNumber: num.replace(/[^0-9]/g, '') || null,
      keyChipType: null,
      locked: false,
      freezing: false,
      createTime: expect.any(Number),
      updateTime: expect.any(Number),
      limitStartTime: 1_700_000_000_000,
      limitEndTime: 4_000_000_000_000,
      assignStatus: {
        id: record?.id,
        assignStatus: 'unassigned',
        assignMemberId: null,
        createTime: null,
        updateTime: null,
      },
      assetLimits: null,
      assetExtends: [
        { extendCode: 'edition', extendValue: 'pro' },
        { extendCode: 'seats', extendValue: '20' },
      ],
      borrowedUsbKey: false,
    });
  });

  it('gives the digits of the asset number as keyShellNumber', async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const [order] = await submit(
      h,
      tenant,
      batch(tenant, [
        newBuy({
          enterpriseGlobalId: enterprise.globalId,
          licenseType: 'cloud_customer',
          assets: [{ products: [product()] }],
        }),
      ]),
    );
    const [record] = await records(enterprise.globalId);
    expect(record?.customerId).toBe(order?.customerId);
    expect(record?.assetNum).toMatch(/^8[0-9]{9}$/);
    expect(record?.keyShellNumber).toBe(record?.assetNum);
  });

  it('filters by extendCode', async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const tagged = await buyFor(enterprise, 'cloud_customer', {
      assetExtendList: [{ extendCode: 'tag', extendValue: 'x' }],
    });
    const plain = await buyFor(enterprise, 'cloud_customer');
    expect((await records(enterprise.globalId, { extendCode: 'tag' })).map((r) => r.assetNum)).toEqual([
      tagged.num,
    ]);
    expect(await records(enterprise.globalId, { extendCode: 'nothing-has-this' })).toEqual([]);
    expect((await records(enterprise.globalId, { extendCode: '' })).map((r) => r.assetNum).sort()).toEqual(
      [tagged.num, plain.num].sort(),
    );
  });

  it('shows an assignment to a member, and leaves revoked assets out', async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const assigned = await buyFor(enterprise, 'cloud_customer');
    const revoked = await buyFor(enterprise, 'cloud_customer');
    const admin = await h.database.db
      .selectFrom('members')
      .select('id')
      .where('global_id', '=', enterprise.adminGlobalId)
      .executeTakeFirstOrThrow();
    const asset = await h.database.db
      .selectFrom('assets')
      .select('id')
      .where('asset_num', '=', assigned.num)
      .executeTakeFirstOrThrow();
    const assignedAt = new Date('2025-03-04T05:06:07.000Z');
    await h.database.db
      .insertInto('asset_assignments')
      .values({ asset_id: asset.id, member_id: admin.id, created_at: assignedAt, updated_at: assignedAt })
      .execute();
    await submit(
      h,
      tenant,
      batch(tenant, [
        {
          sequence: 1,
          customerId: revoked.order.customerId,
          licenseType: 'cloud_customer',
          orderType: 'delete_asset',
          srcLicenseOrderId: revoked.order.licenseOrderId,
          assets: [{ assetNos: [revoked.num] }],
        },
      ]),
    );
    const [record, ...rest] = await records(enterprise.globalId);
    expect(rest).toEqual([]);
    expect(record?.assignStatus).toEqual({
      id: asset.id,
      assignStatus: 'assigned',
      assignMemberId: enterprise.adminGlobalId,
      createTime: '2025-03-04T05:06:07.000Z',
      updateTime: null,
    });
  });

  it('answers an enterprise without cloud_customer assets with an empty list', async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    expect(await records(enterprise.globalId)).toEqual([]);
  });

  it('answers an unknown enterprise with 13004', async () => {
    expectFailure(await list('no-such-enterprise'), '13004', 'enterpriseGlobalId: no such enterprise');
  });

  it('answers an enterprise whose customers are all in other channels as unknown', async () => {
    const other = await orderTenant(h);
    const theirs = await visibleEnterprise(h, other);
    expectFailure(await list(theirs.globalId), '13004', 'enterpriseGlobalId: no such enterprise');
    const ok = await list(theirs.globalId, {}, other);
    expect(ok.statusCode).toBe(200);
  });

  it("lists only the assets of customers in the app's channels", async () => {
    const enterprise = await visibleEnterprise(h, tenant);
    const mine = await buyFor(enterprise, 'cloud_customer');
    const other = await orderTenant(h);
    // The other app's customer joins the same enterprise (visible to it through a customer of its own).
    await new CustomersRepository(h.database.db).insertIfAbsent({
      id: newGlobalId(),
      channelCode: other.channel,
      channelCustomerId: uniqueCode('oc'),
      crmCustomerId: null,
      name: null,
      customerType: null,
      branchCode: null,
      branchName: null,
      address: null,
      securityMobile: null,
      enterpriseId: enterprise.id,
      isDefault: false,
      gongxin: false,
    });
    await submit(
      h,
      other,
      batch(other, [
        newBuy({
          enterpriseGlobalId: enterprise.globalId,
          licenseType: 'cloud_customer',
          assets: [{ products: [product()] }],
        }),
      ]),
    );
    expect((await records(enterprise.globalId)).map((r) => r.assetNum)).toEqual([mine.num]);
  });
});

orderGuardSuite(() => h, {
  method: 'GET',
  path: ({ enterprise }) => `${ORDER_PREFIX}/asset/${enterprise.globalId}/list`,
});
