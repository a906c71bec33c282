import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeywardClient, type KeywardClient } from '../../packages/client/src/index.js';
import type { DemoFacts } from '../../src/cli/demo/load-demo.js';
import { runCli } from '../support/server-process.js';
import { runDemoJson, runShell, startDemoServer, type DemoServer } from './support/demo-server.js';

// `keyward demo` against a real `keyward serve`: what it prints must be true of the server, the
// credentials must log in, and the printed curl commands must work as pasted.
let live: DemoServer;
let facts: DemoFacts;
let asAdmin: KeywardClient;

const NONCE_CMD = 'g_nonce=$(openssl rand -hex 12)';
const SERVER = '$KEYWARD_URL';

beforeAll(async () => {
  live = await startDemoServer();
  facts = await runDemoJson(live);
  asAdmin = createKeywardClient({
    baseUrl: live.server.url,
    appKey: facts.app.appKey,
    appSecret: facts.app.appSecret,
    member: { account: facts.admin.account, password: facts.admin.password },
  });
});
afterAll(async () => live?.stop());

const numbersOf = (licenseType: string) =>
  facts.assets.filter((a) => a.licenseType === licenseType).map((a) => a.assetNum);
const assetOf = (assetNum: string) => {
  const asset = facts.assets.find((a) => a.assetNum === assetNum);
  if (asset === undefined) throw new Error(`the demo printed no asset ${assetNum}`);
  return asset;
};

describe('keyward demo --json', () => {
  it('prints the application, enterprise, administrator login and commands to try', () => {
    expect(Object.keys(facts)).toEqual([
      'baseUrl',
      'app',
      'enterprise',
      'admin',
      'customers',
      'assets',
      'members',
      'lending',
      'usage',
      'curl',
      'tour',
      'runtime',
    ]);
    expect(facts.baseUrl).toBe(live.server.url);
    expect(facts.app.appKey).toMatch(/^kw_/);
    expect(facts.app.appSecret.length).toBeGreaterThanOrEqual(32);
    expect(facts.admin.account).toBe(`admin@${facts.enterprise.code}`);
    expect(facts.admin.password).toMatch(/^.{8,16}$/);
    expect(facts.curl.token).toContain(`${facts.app.appKey}:${facts.app.appSecret}`);
    expect(facts.curl.userToken).toContain(facts.admin.account);
    for (const call of [facts.curl.order, facts.curl.member]) {
      expect(call).toContain(facts.enterprise.enterpriseGlobalId);
      expect(call).toContain(NONCE_CMD);
    }
    // Every request names the server as the README and docs/ do, so $KEYWARD_URL points them all.
    for (const line of [facts.curl.token, facts.curl.userToken, facts.curl.order, facts.curl.member]) {
      expect(line).toContain(`"${SERVER}/`);
      expect(line).not.toContain(live.server.url);
    }
  });

  it('bought every license type of the data set, each order applied', async () => {
    expect(new Set(facts.assets.map((a) => a.licenseType))).toEqual(
      new Set(['normal_recover_usbkey', 'softkey', 'cloud_customer', 'cloud_account']),
    );
    expect(facts.assets.filter((a) => a.borrowedUsbKey).map((a) => a.assetNum)).toEqual([
      facts.lending.borrowedUsbKey,
    ]);
    for (const licenseOrderId of new Set(facts.assets.map((a) => a.licenseOrderId))) {
      const order = await asAdmin.GET('/order/api/order/v1/licenseOrder/{licenseOrderId}', {
        params: { path: { licenseOrderId } },
      });
      expect(order.status).toBe('completed');
    }
  });

  it('made an enterprise with two customers, the default one first', async () => {
    const found = await asAdmin.GET('/order/api/order/v1/enterprise/user/query', {
      params: { query: { channelCode: facts.app.channel, channelCustomerId: 'hq', defaultCustomer: 'N' } },
    });
    expect(found.map((c) => [c.channelCustomerId, c.isDefault, c.enterpriseGlobalId])).toEqual([
      ['hq', true, facts.enterprise.enterpriseGlobalId],
      ['lab', false, facts.enterprise.enterpriseGlobalId],
    ]);
    expect(found[0]?.enterpriseName).toBe(facts.enterprise.enterpriseName);
  });

  it('lists the cloud-customer assets with their extensions', async () => {
    const listed = await asAdmin.GET('/order/api/order/v1/asset/{enterpriseGlobalId}/list', {
      params: {
        path: { enterpriseGlobalId: facts.enterprise.enterpriseGlobalId },
        query: { extendCode: 'seats' },
      },
    });
    expect(listed.map((a) => a.assetNum).sort()).toEqual(numbersOf('cloud_customer').sort());
    for (const asset of listed) {
      expect(asset.assetExtends.map((e) => e.extendCode)).toContain('seats');
    }
  });

  it('added the employees, who log in with the printed password', async () => {
    const page = await asAdmin.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/members', {
      params: { path: { enterpriseGlobalId: facts.enterprise.enterpriseGlobalId } },
    });
    expect(page.list.map((m) => m.userName)).toEqual([
      facts.admin.account,
      ...facts.members.map((m) => m.account),
    ]);
    for (const member of facts.members) {
      const listed = page.list.find((m) => m.globalId === member.memberGlobalId);
      expect(listed?.assetNums.slice().sort()).toEqual(member.assetNums.slice().sort());
    }
    const carol = facts.members[2];
    if (carol === undefined) throw new Error('the demo printed fewer than three employees');
    const asCarol = createKeywardClient({
      baseUrl: live.server.url,
      appKey: facts.app.appKey,
      appSecret: facts.app.appSecret,
      member: { account: carol.account, password: carol.password },
    });
    expect(await asCarol.memberToken()).toEqual(expect.any(String));
  });

  it('assigned assets as printed and lent one to the lent lock', async () => {
    const items = await asAdmin.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/asset/assetNums', {
      params: { path: { enterpriseGlobalId: facts.enterprise.enterpriseGlobalId } },
    });
    expect(items.map((i) => i.assetNum).sort()).toEqual(facts.assets.map((a) => a.assetNum).sort());
    const holderOf = new Map(facts.members.map((m) => [m.memberGlobalId, m.account]));
    for (const item of items) {
      const printed = assetOf(item.assetNum);
      expect(item.assetId).toBe(printed.assetId);
      expect(item.cloudAccountGlobalId === null ? null : holderOf.get(item.cloudAccountGlobalId)).toBe(
        printed.assignedTo,
      );
      // Both sides of the lending are lent: the lent assets and the lent lock holding them.
      expect(item.borrowedFlag).toBe(
        facts.lending.assetNums.includes(item.assetNum) || item.assetNum === facts.lending.borrowedUsbKey,
      );
    }

    const lentLocks = await asAdmin.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys', {
      params: { path: { enterpriseGlobalId: facts.enterprise.enterpriseGlobalId } },
    });
    expect(lentLocks).toEqual([
      {
        assetId: assetOf(facts.lending.borrowedUsbKey).assetId,
        assetNum: facts.lending.borrowedUsbKey,
        borrowedFlag: true,
        cloudAccountGlobalId: facts.lending.memberGlobalId,
      },
    ]);
    const onLentLock = await asAdmin.GET('/me/api/v1/enterprise/asset/{assetId}/merchandiseProducts', {
      params: { path: { assetId: assetOf(facts.lending.borrowedUsbKey).assetId } },
    });
    const lentFrom = onLentLock.productInstanceList.map((p) => p.assetNum);
    expect(lentFrom).toEqual(
      expect.arrayContaining([facts.lending.borrowedUsbKey, ...facts.lending.assetNums]),
    );
  });

  it('put a merchandise tree on the refillable lock', async () => {
    const lock = await asAdmin.GET('/me/api/v1/enterprise/asset/{assetId}/merchandiseProducts', {
      params: { path: { assetId: facts.tour.LOCK_ID } },
    });
    expect(lock.productInstanceList.map((p) => p.productName)).toEqual(['Viewer']);
    const suite = lock.children[0];
    expect(suite?.merchandiseNum).toBe('M-100');
    expect(suite?.productInstanceList?.map((p) => p.productName)).toEqual(['Designer']);
    expect(suite?.children?.map((c) => c.merchandiseNum)).toEqual(['M-110']);
    expect(suite?.children?.[0]?.productInstanceList?.map((p) => p.productName).sort()).toEqual([
      'Analyzer',
      'Simulator',
    ]);
  });

  it('loaded a month of usage: curves, refusals, a product at capacity, seats held now', async () => {
    expect(facts.usage.refused).toBe(true);
    expect(facts.usage.atCapacity).not.toBeNull();
    const answer = await fetch(
      `${live.server.url}/admin/usage?enterprise=${facts.enterprise.enterpriseGlobalId}&bucket=day`,
      { headers: { authorization: `Bearer ${live.cliEnv.KEYWARD_ADMIN_KEY ?? ''}` } },
    );
    const report = (await answer.json()) as {
      series: Array<{ peakSeats: number }>;
      deniedByCode: Record<string, number>;
      atCapacity: Array<{ product: string }>;
    };
    expect(report.series.filter((p) => p.peakSeats > 0).length).toBeGreaterThan(15);
    expect(report.deniedByCode['90005']).toBeGreaterThan(0);
    expect(report.atCapacity.map((l) => l.product)).toContain(facts.usage.atCapacity);
  });

  it('prints curl commands that work as pasted', async () => {
    const { server, token, userToken, order, member } = facts.curl;
    expect(server).toBe(`export KEYWARD_URL=${live.server.url}`);
    // A shell whose KEYWARD_URL names no server: the first line pasted points it at the demo's.
    const result = await runShell(['set -e', server, token, userToken, order, 'echo', member].join('\n'), {
      KEYWARD_URL: 'http://127.0.0.1:9',
    });
    expect(result.code, result.stderr).toBe(0);
    const [orderAnswer, memberAnswer] = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { code: unknown; data: Array<{ assetNum: string }> });
    expect(orderAnswer?.code).toBe(0);
    expect(orderAnswer?.data.map((a) => a.assetNum).sort()).toEqual(numbersOf('cloud_customer').sort());
    expect(memberAnswer?.code).toBe(0);
    expect(memberAnswer?.data).toHaveLength(facts.assets.length);
  });
});

describe('keyward demo', () => {
  it('runs again into a new enterprise, and says what it made', async () => {
    const again = await runCli(['demo'], live.cliEnv);
    expect(again.code, again.stderr).toBe(0);
    const enterprise = /enterpriseGlobalId\s+(\S+)/.exec(again.stdout)?.[1];
    expect(enterprise).toEqual(expect.any(String));
    expect(enterprise).not.toBe(facts.enterprise.enterpriseGlobalId);
    for (const label of ['appKey', 'appSecret', 'account', 'password', 'TOKEN=$(curl', 'USER_TOKEN=$(curl']) {
      expect(again.stdout).toContain(label);
    }
    expect(again.stdout).toContain(`export KEYWARD_URL=${live.server.url}\n`);
    expect(again.stdout).toContain('Variables for the tour (docs/tour.md):');
    expect(again.stdout).toContain(`export APP_KEY=`);
    expect(again.stdout).toContain(`ENTERPRISE=${enterprise}`);
    expect(again.stdout).toContain(`${live.server.url}/console/sign-in   account admin@`);
    expect(again.stdout).toContain(`${live.server.url}/console/operator/sign-in`);
  });

  it('fails with a clear message when no server answers', async () => {
    const result = await runCli(['demo', '--json'], { ...live.cliEnv, KEYWARD_URL: 'http://127.0.0.1:9' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach the Keyward server');
    expect(result.stdout).toBe('');
  });

  it('refuses a wrong admin key before creating anything', async () => {
    const result = await runCli(['demo'], { ...live.cliEnv, KEYWARD_ADMIN_KEY: 'wrong' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('creating the application: admin key wrong: the server at');
  });
});

describe('the console logins the demo prints', () => {
  it('sign the demo administrator into the console', async () => {
    const response = await fetch(`${live.server.url}/console/sign-in`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ userName: facts.admin.account, password: facts.admin.password }),
    });
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe('/console/enterprise');
    const cookie = /keyward_session=[^;]+/.exec(response.headers.get('set-cookie') ?? '')?.[0];
    expect(cookie).toBeDefined();
    const employees = await fetch(`${live.server.url}/console/enterprise`, {
      headers: { cookie: cookie ?? '' },
    });
    const html = await employees.text();
    for (const member of facts.members) expect(html).toContain(member.account);
  });
});
