import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.repository.js';
import { seedEnterprise, type TestEnterprise } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { appIdOf, audit, auditCall } from './audit-helpers.js';
import { orderCall, orderTenant, type OrderTenant } from './order-helpers.js';

let h: Harness;
let e1: TestEnterprise;
let e2: TestEnterprise;
let t1: OrderTenant;
let t2: OrderTenant;
let startedAt: string;

async function setLimit(enterprise: TestEnterprise, memberLimit: number): Promise<void> {
  const response = await h.app.inject({
    method: 'POST',
    url: `/admin/enterprises/${enterprise.globalId}/member-limit`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { memberLimit },
  });
  expect(response.statusCode, response.body).toBe(200);
}

async function bind(t: OrderTenant): Promise<void> {
  const response = await orderCall(h, t, 'POST', '/enterprise/user/bind', {
    channelCode: t.channel,
    channelCustomerId: uniqueCode('cc'),
    enterpriseName: 'Filtered Ltd',
  });
  expect(response.statusCode, response.body).toBe(200);
}

beforeAll(async () => {
  h = await startHarness();
  startedAt = new Date(Date.now() - 1000).toISOString();
  [e1, e2] = [await seedEnterprise(h), await seedEnterprise(h)];
  [t1, t2] = [await orderTenant(h), await orderTenant(h)];
  for (let i = 1; i <= 5; i += 1) {
    await setLimit(e1, i);
    await setLimit(e2, i);
  }
  await bind(t1);
  await bind(t1);
  await bind(t2);
});
afterAll(async () => h.close());

describe('GET /admin/audit filters', () => {
  it("selects one enterprise's rows by its global id, newest first", async () => {
    const entries = await audit(h, { enterprise: e1.globalId });
    expect(entries).toHaveLength(5);
    expect(entries.every((e) => e.enterpriseId === e1.globalId)).toBe(true);
    expect(entries.map((e) => e.detail.memberLimit)).toEqual([5, 4, 3, 2, 1]);
    expect(entries.map((e) => e.id)).toEqual([...entries.map((e) => e.id)].sort((a, b) => b - a));
    expect(await audit(h, { enterprise: 'no-such-enterprise' })).toEqual([]);
  });

  it("selects one app's rows by its id or its key", async () => {
    const appId = await appIdOf(h, t1.app.appKey);
    const byId = await audit(h, { app: appId });
    expect(byId.map((e) => e.action)).toEqual(['customer.bound', 'customer.bound']);
    expect(byId.every((e) => e.appId === appId && e.enterpriseId !== null)).toBe(true);
    expect(await audit(h, { app: t1.app.appKey })).toEqual(byId);
    expect(await audit(h, { app: 'kw_nobody' })).toEqual([]);
  });

  it('combines filters: action, enterprise, subject and a time window', async () => {
    const sets = await audit(h, { action: 'enterprise.member_limit_set', enterprise: e2.globalId });
    expect(sets).toHaveLength(5);
    expect(await audit(h, { action: 'customer.bound', enterprise: e2.globalId })).toEqual([]);
    expect(await audit(h, { subject: e2.globalId, enterprise: e1.globalId })).toEqual([]);

    const newest = sets[0] as AuditRecord;
    const at = new Date(newest.createdAt).toISOString();
    const window = { enterprise: e2.globalId, since: startedAt };
    expect(await audit(h, window)).toEqual(sets);
    // since is inclusive, until exclusive: the newest row is at or after its own time.
    expect((await audit(h, { ...window, since: at })).map((e) => e.id)).toContain(newest.id);
    expect((await audit(h, { ...window, until: at })).map((e) => e.id)).not.toContain(newest.id);
    expect(await audit(h, { ...window, until: startedAt })).toEqual([]);
    expect(await audit(h, { enterprise: e2.globalId, since: '2999-01-01T00:00:00+08:00' })).toEqual([]);
  });

  it('pages with before=<the last id of a page>', async () => {
    const all = await audit(h, { enterprise: e1.globalId });
    const pages: AuditRecord[][] = [];
    let before: number | undefined;
    for (;;) {
      const page = await audit(h, {
        enterprise: e1.globalId,
        limit: 2,
        ...(before === undefined ? {} : { before }),
      });
      if (page.length === 0) break;
      pages.push(page);
      before = (page.at(-1) as AuditRecord).id;
    }
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat()).toEqual(all);
  });

  it('keeps every field of an entry and adds enterpriseId', async () => {
    const [entry] = await audit(h, { enterprise: e1.globalId, limit: 1 });
    expect(Object.keys(entry ?? {}).sort()).toEqual([
      'action',
      'appId',
      'clientRequestId',
      'createdAt',
      'detail',
      'enterpriseId',
      'id',
      'operator',
      'operatorId',
      'requestId',
      'subject',
    ]);
  });

  it.each<[Record<string, string>, RegExp]>([
    [{ action: 'app.exploded' }, /^action: must be one of app\.created, /],
    [{ action: '' }, /^action: must be one of /],
    [{ since: 'yesterday' }, /^since: must match format "date-time"/],
    [{ until: '2024-13-01T00:00:00Z' }, /^until: must match format "date-time"/],
    [{ since: '2024-01-01' }, /^since: must match format "date-time"/],
    [{ limit: '0' }, /^limit: must be >= 1/],
    [{ limit: '1001' }, /^limit: must be <= 1000/],
    [{ before: 'abc' }, /^before: must be .*integer/],
    [{ before: '0' }, /^before: must be >= 1/],
    [{ enterprise: '' }, /^enterprise: must NOT have fewer than 1 characters/],
    [{ app: 'x'.repeat(201) }, /^app: must NOT have more than 200 characters/],
    [{ subject: 'x'.repeat(201) }, /^subject: must NOT have more than 200 characters/],
    [{ subject: 'K1\u001b[2J' }, /^subject: must not contain the character U\+001B$/],
    [{ enterprise: 'e\u0000' }, /^enterprise: must not contain the character U\+0000$/],
  ])('refuses %o with a 400 naming the field', async (query, message) => {
    const response = await auditCall(h, query);
    expect(response.statusCode, response.body).toBe(400);
    expect((response.json() as { error: string }).error).toMatch(message);
  });

  it('takes a filter as a value to match, never as SQL', async () => {
    // Fuzzing files on the same PostgreSQL database may bind an enterprise named "%", so what is
    // asserted is that none of this file's rows match, which a filter read as SQL would break.
    const ours = new Set([e1.globalId, e2.globalId]);
    const oursIn = (rows: AuditRecord[]) =>
      rows.filter((r) => r.enterpriseId !== null && ours.has(r.enterpriseId));
    for (const hostile of ["x' or '1'='1", '%', '_', "'; drop table audit_log; --"]) {
      expect(oursIn(await audit(h, { subject: hostile }))).toEqual([]);
      expect(oursIn(await audit(h, { enterprise: hostile }))).toEqual([]);
      expect(await audit(h, { app: hostile })).toEqual([]);
    }
    expect((await audit(h, { enterprise: e1.globalId })).length).toBeGreaterThan(0);
  });

  it('is for the operator only: no admin key, or an app token, is refused', async () => {
    expect((await h.app.inject({ method: 'GET', url: '/admin/audit' })).statusCode).toBe(401);
    const asApp = await h.app.inject({
      method: 'GET',
      url: '/admin/audit',
      headers: { authorization: `Bearer ${t1.token}` },
    });
    expect(asApp.statusCode).toBe(401);
  });
});
