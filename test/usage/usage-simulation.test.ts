import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { addMember, assign, type MemberSession } from '../support/order-fixtures.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';

// POST /admin/usage/simulate (what `keyward demo` loads): a month of usage for a new enterprise's
// licenses, with a product at capacity and its refusals, each audited as the runtime audits one,
// naming the employee refused; refused for an enterprise with history.

let h: Harness;
let world: RuntimeWorld;
let busy: string;
let employee: MemberSession;

interface AuditRow {
  subject: string;
  enterprise_id: string | null;
  app_id: string;
  created_at: Date;
  detail: Record<string, unknown>;
}

async function refusalRows(enterpriseGlobalId: string, product: string): Promise<AuditRow[]> {
  const result = await sql<AuditRow>`
    select a.subject, a.enterprise_id, a.app_id, a.created_at, a.detail from audit_log a
     where a.action = 'lease.denied' and a.detail->>'crmProductId' = ${product}
       and (a.enterprise_id is null
            or a.enterprise_id = (select id from enterprises where global_id = ${enterpriseGlobalId}))
     order by a.id
  `.execute(h.database.db);
  return result.rows;
}

const simulate = (body: Record<string, unknown>) =>
  h.app.inject({
    method: 'POST',
    url: '/admin/usage/simulate',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: body,
  });

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  const lock = await lockWith(world, { limitConcurrent: 5 });
  busy = lock.crmProductId;
  await lockWith(world, { limitConcurrent: 20 });
  employee = await addMember(world);
  await assign(world, employee.globalId, [lock.assetNum]);
});
afterAll(async () => h.close());

describe('POST /admin/usage/simulate', () => {
  it('writes a month of rollups the usage report and the enterprise page read', async () => {
    const started = Date.now();
    const answer = await simulate({ enterprise: world.enterpriseGlobalId, app: world.app.appKey, days: 30 });
    expect(answer.statusCode, answer.body).toBe(200);
    expect(Date.now() - started).toBeLessThan(5000);
    const result = answer.json() as { licenses: number; hours: number; denied: number; atCapacity: string };
    expect(result.licenses).toBe(2);
    expect(result.atCapacity).toBe(busy);
    expect(result.denied).toBeGreaterThan(0);
    const report = await h.app.services.usage.report({ enterprise: world.enterpriseGlobalId, bucket: 'day' });
    expect(report.series.filter((p) => p.peakSeats > 0).length).toBeGreaterThan(15);
    expect(report.atCapacity.map((l) => l.product)).toContain(busy);
    expect(Object.keys(report.deniedByCode)).toEqual(['90005']);
    const page = await (
      await enterpriseClient(h, world.admin.account, world.admin.password)
    ).get('/console/enterprise/usage');
    expect([...page.body.matchAll(/data-series-count="2"/g)]).toHaveLength(2);
    // Who was refused: the employee the busy lock is assigned to, by name, linked to his page.
    const refusals = /<section class="refusals">(.*?)<\/section>/s.exec(page.body)?.[1] ?? '';
    expect(refusals).toContain(`<a href="/console/enterprise/members/${employee.globalId}">`);
    expect(refusals).toContain(employee.account);
    expect(refusals).toContain('All 5 seats of the product are in use (5 in use).');
  });

  it('audits each simulated refusal as the runtime does, naming the employee, with no webhook event', async () => {
    const rows = await refusalRows(world.enterpriseGlobalId, busy);
    // One audit row per refused check-out: the chart counts what the log shows.
    const counted = await sql<{ n: number }>`
      select sum(denied)::int as n from usage_denials
       where enterprise_id = (select id from enterprises where global_id = ${world.enterpriseGlobalId})
    `.execute(h.database.db);
    expect(rows).toHaveLength(counted.rows[0]?.n ?? -1);
    const [first] = rows;
    expect(first?.subject).toBe(employee.account);
    expect(first?.detail).toMatchObject({
      code: '90005',
      reason: 'all 5 seats of the product are in use (5 in use)',
      holderKind: 'member',
      crmProductId: busy,
      simulated: true,
    });
    expect(String(first?.detail['fingerprint'])).toMatch(/^DESK-.+-[678]$/);
    expect(rows.every((r) => r.subject === employee.account && r.enterprise_id !== null)).toBe(true);
    expect(new Set(rows.map((r) => r.app_id))).toEqual(new Set([rows[0]?.app_id]));
    expect(rows.every((r) => r.created_at.getTime() < Date.now() - 3_600_000)).toBe(true);
    const times = rows.map((r) => r.created_at.getTime());
    expect(times).toEqual([...times].sort((x, y) => x - y));
    expect(new Set(times.map((t) => new Date(t).getUTCHours())).size).toBeGreaterThan(3);
    // The page's "who was refused": a line per day of the range (30 days to today), with its count.
    const page = await (
      await enterpriseClient(h, world.admin.account, world.admin.password)
    ).get('/console/enterprise/usage');
    const lines = [...page.body.matchAll(/<td [^>]*class="times"[^>]*>(\d+)<\/td>/g)].map((m) =>
      Number(m[1]),
    );
    const since = Math.floor(Date.now() / 86_400_000) * 86_400_000 - 29 * 86_400_000;
    const shown = rows.filter((r) => r.created_at.getTime() >= since);
    expect(lines.reduce((sum, n) => sum + n, 0)).toBe(shown.length);
    expect(lines).toHaveLength(new Set(shown.map((r) => r.created_at.toISOString().slice(0, 10))).size);
    expect(Math.max(...lines)).toBeGreaterThan(1);
    const events = await sql<{ n: number }>`
      select count(*)::int as n from webhook_events where type = 'lease.denied' and data->>'holder' = ${employee.account}
    `.execute(h.database.db);
    expect(events.rows[0]?.n).toBe(0);
  });

  it('keeps at capacity the license an employee holds, over a lock nearer five seats', async () => {
    const other = await runtimeWorld(h);
    const lock = await lockWith(other, { limitConcurrent: 5 });
    const held = await lockWith(other, { limitConcurrent: 3 });
    const member = await addMember(other);
    await assign(other, member.globalId, [held.assetNum]);
    const answer = await simulate({ enterprise: other.enterpriseGlobalId, app: other.app.appKey, days: 14 });
    expect(answer.statusCode, answer.body).toBe(200);
    expect((answer.json() as { atCapacity: string }).atCapacity).toBe(held.crmProductId);
    expect((await refusalRows(other.enterpriseGlobalId, lock.crmProductId)).length).toBe(0);
    const rows = await refusalRows(other.enterpriseGlobalId, held.crmProductId);
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((r) => r.subject))).toEqual(new Set([member.account]));
  });

  it('audits a lock\u2019s simulated refusals under the lock, with no enterprise, as the runtime does', async () => {
    const other = await runtimeWorld(h);
    const lock = await lockWith(other, { limitConcurrent: 4 });
    const answer = await simulate({ enterprise: other.enterpriseGlobalId, app: other.app.appKey, days: 14 });
    expect((answer.json() as { atCapacity: string }).atCapacity).toBe(lock.crmProductId);
    const rows = await refusalRows(other.enterpriseGlobalId, lock.crmProductId);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((r) => r.subject === lock.assetNum && r.enterprise_id === null)).toBe(true);
    expect(rows[0]?.detail['holderKind']).toBe('lock');
  });

  it('refuses an enterprise with usage history, and unknown names', async () => {
    const again = await simulate({ enterprise: world.enterpriseGlobalId, app: world.app.appKey });
    expect(again.statusCode).toBe(400);
    expect(again.body).toContain('enterprise');
    const unknown = await simulate({ enterprise: 'no-such-enterprise', app: world.app.appKey });
    expect(unknown.statusCode).toBe(400);
    expect(
      (await simulate({ enterprise: world.enterpriseGlobalId, app: 'nope', days: 500 })).statusCode,
    ).toBe(400);
  });
});
