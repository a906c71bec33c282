import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  addMembers,
  appToken,
  call,
  createApp,
  createEnterprise,
  memberHeaders,
  memberToken,
  ME,
  postBatch,
  purchaseBatch,
  type LiveApp,
  type LiveEnterprise,
  type LiveMember,
} from './support/live-api.js';

// Two `keyward serve` processes on one PostgreSQL, racing each other the way a load balancer makes
// them: what one instance does, the other honours at once. (test/e2e/instances.test.ts covers
// tokens, nonces, disabled apps and asset numbers across instances.)
const url = testDatabaseUrl();
const ADMIN_KEY = randomBytes(16).toString('hex');
let a: ServerProcess;
let b: ServerProcess;
let database: DatabaseHandle;
let app: LiveApp;
let token: string;
let enterprise: LiveEnterprise;

beforeAll(async () => {
  if (url === undefined) return;
  const env = { DATABASE_URL: url, KEYWARD_ADMIN_KEY: ADMIN_KEY, DATA_DIR: '/tmp/keyward-reliability' };
  [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  database = await openPostgres(url);
  app = await createApp(a.url, ADMIN_KEY);
  token = await appToken(a.url, app);
  enterprise = await createEnterprise(a.url, ADMIN_KEY, app, token);
});
afterAll(async () => {
  if (url === undefined) return;
  await Promise.all([a.stop(), b.stop(), database.close()]);
});

const both = () => [a.url, b.url];

describe.runIf(url !== undefined)('several instances on one PostgreSQL', () => {
  it('creates one set of orders for a batchOrder retried on both instances at once', async () => {
    const { body, assetNums } = purchaseBatch(app, { orders: 3, assets: 2 });
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => postBatch(both()[i % 2] as string, app, token, body)),
    );
    for (const answer of answers) expect(answer.code, answer.body).toBe(0);
    const first = answers[0]?.data;
    for (const answer of answers) expect(answer.data).toEqual(first);

    const db = database.db;
    const channelOrderId = body.channelOrderId as string;
    const batches = await db
      .selectFrom('order_batches')
      .select('id')
      .where('channel_order_id', '=', channelOrderId)
      .execute();
    const orders = await db
      .selectFrom('license_orders')
      .select('id')
      .where('channel_order_id', '=', channelOrderId)
      .execute();
    const products = await db
      .selectFrom('product_instances as p')
      .innerJoin('assets as s', 's.id', 'p.asset_id')
      .select('p.id')
      .where('s.asset_num', 'in', assetNums)
      .execute();
    expect([batches.length, orders.length, products.length]).toEqual([1, 3, 12]);
  });

  it('gives an asset assigned to two members on both instances at once to exactly one', async () => {
    const [first, second] = (await addMembers(a.url, token, enterprise, 2)) as [LiveMember, LiveMember];
    const { body, assetNums } = purchaseBatch(app, {
      channelCustomerId: enterprise.channelCustomerId,
      assets: 10,
    });
    expect((await postBatch(b.url, app, token, body)).code).toBe(0);
    const assign = (base: string, member: LiveMember, num: string) =>
      call(base, 'POST', `${ME}/enterprise/member/${member.globalId}/privileges`, {
        headers: memberHeaders(token, enterprise.adminToken),
        body: { addAssets: [num] },
      });
    for (const num of assetNums) {
      const answers = await Promise.all([assign(a.url, first, num), assign(b.url, second, num)]);
      const codes = answers.map((r) => r.code).sort();
      expect(codes, answers.map((r) => r.body).join('\n')).toEqual([0, '60028'].sort());
    }
    const rows = await database.db
      .selectFrom('asset_assignments as g')
      .innerJoin('assets as s', 's.id', 'g.asset_id')
      .select(['s.asset_num', 'g.member_id'])
      .where('s.asset_num', 'in', assetNums)
      .execute();
    expect(rows.map((r) => r.asset_num).sort()).toEqual([...assetNums].sort());
  });

  it("shows on one instance's kept member page, at once, what the other changed", async () => {
    const [member] = (await addMembers(a.url, token, enterprise, 1)) as [LiveMember];
    const { body, assetNums } = purchaseBatch(app, {
      channelCustomerId: enterprise.channelCustomerId,
      assets: 1,
    });
    expect((await postBatch(a.url, app, token, body)).code).toBe(0);
    const admin = memberHeaders(token, enterprise.adminToken);
    const pageOn = async (base: string) => {
      const answer = await call<{ list: Array<{ globalId: string; name: string; assetNums: string[] }> }>(
        base,
        'GET',
        `${ME}/enterprise/${enterprise.enterpriseGlobalId}/members?pageSize=500`,
        { headers: admin },
      );
      expect(answer.code, answer.body).toBe(0);
      const listed = answer.data?.list.find((m) => m.globalId === member.globalId);
      if (listed === undefined) throw new Error(`member ${member.globalId} missing from ${answer.body}`);
      return listed;
    };
    // Read twice on B, so B keeps the page; then each change on A must show on B's next read.
    await pageOn(b.url);
    expect((await pageOn(b.url)).assetNums).toEqual([]);
    const assigned = await call(a.url, 'POST', `${ME}/enterprise/member/${member.globalId}/privileges`, {
      headers: admin,
      body: { addAssets: assetNums },
    });
    expect(assigned.code, assigned.body).toBe(0);
    expect((await pageOn(b.url)).assetNums).toEqual(assetNums);
    const edited = await call(
      a.url,
      'PUT',
      `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member/${member.globalId}`,
      { headers: admin, body: { name: 'Renamed on A' } },
    );
    expect(edited.code, edited.body).toBe(0);
    expect((await pageOn(b.url)).name).toBe('Renamed on A');
  });

  it('refuses on one instance, at once, a session ended on the other', async () => {
    const [leaving, resetting] = (await addMembers(a.url, token, enterprise, 2)) as [LiveMember, LiveMember];
    // Plain members: past the guard they meet 33003, so 60005 can only mean a dead session.
    const probe = (base: string, user: string) =>
      call(base, 'GET', `${ME}/enterprise/${enterprise.enterpriseGlobalId}/members`, {
        headers: memberHeaders(token, user),
      });
    const leavingToken = await memberToken(b.url, app, leaving.account, leaving.password);
    const resettingToken = await memberToken(a.url, app, resetting.account, resetting.password);
    expect((await probe(b.url, leavingToken)).code).toBe('33003');
    expect((await probe(a.url, resettingToken)).code).toBe('33003');

    const admin = memberHeaders(token, enterprise.adminToken);
    const deleted = await call(
      a.url,
      'DELETE',
      `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member/${leaving.globalId}`,
      {
        headers: admin,
      },
    );
    expect(deleted.code, deleted.body).toBe(0);
    expect((await probe(b.url, leavingToken)).code).toBe('60005');

    const reset = await call(
      b.url,
      'PUT',
      `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member/${resetting.globalId}/resetPassword`,
      { headers: admin, body: { password: 'Fresh-pass2' } },
    );
    expect(reset.code, reset.body).toBe(0);
    expect((await probe(a.url, resettingToken)).code).toBe('60005');
  });
});
