import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appToken, createTestApp } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { runCli } from '../support/server-process.js';
import { dataOf, enterpriseRow, orderCalls, type EnterpriseCustomerData } from './enterprise-helpers.js';

let h: Harness;
let bound: EnterpriseCustomerData;
let code: string;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  h = await startHarness();
  const app = await createTestApp(h, { scopes: ['auth_order'] });
  bound = dataOf<EnterpriseCustomerData>(
    await orderCalls(h, await appToken(h, app)).post('/enterprise/user/bind', {
      channelCode: app.channels[0],
      channelCustomerId: uniqueCode('cust'),
      enterpriseName: 'Shown Co',
    }),
  );
  code = (await enterpriseRow(h, bound.enterpriseGlobalId)).code;
  const url = await h.app.listen({ port: 0, host: '127.0.0.1' });
  cliEnv = { KEYWARD_URL: url, KEYWARD_ADMIN_KEY: ADMIN_KEY };
});
afterAll(async () => h.close());

const admin = (url: string, key = ADMIN_KEY) =>
  h.app.inject({ method: 'GET', url: `/admin${url}`, headers: { authorization: `Bearer ${key}` } });

describe('admin API: show an enterprise', () => {
  it('answers the enterprise with its administrator account', async () => {
    const response = await admin(`/enterprises/${bound.enterpriseGlobalId}`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      enterpriseGlobalId: bound.enterpriseGlobalId,
      enterpriseName: 'Shown Co',
      enterpriseCode: code,
      adminAccount: `admin@${code}`,
    });
  });

  it('answers an unknown enterprise with 404', async () => {
    const response = await admin('/enterprises/no-such-enterprise');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ error: 'no enterprise no-such-enterprise' });
  });

  it('refuses a wrong admin key with 401', async () => {
    expect((await admin(`/enterprises/${bound.enterpriseGlobalId}`, 'wrong')).statusCode).toBe(401);
  });
});

describe('keyward enterprise show', () => {
  it('prints exactly the documented JSON with --json', async () => {
    const result = await runCli(['enterprise', 'show', bound.enterpriseGlobalId, '--json'], cliEnv);
    expect(result.code, result.stderr).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const printed = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(Object.keys(printed)).toEqual([
      'enterpriseGlobalId',
      'enterpriseName',
      'enterpriseCode',
      'adminAccount',
    ]);
    expect(printed).toEqual({
      enterpriseGlobalId: bound.enterpriseGlobalId,
      enterpriseName: 'Shown Co',
      enterpriseCode: code,
      adminAccount: `admin@${code}`,
    });
  });

  it('prints a readable form without --json', async () => {
    const result = await runCli(['enterprise', 'show', bound.enterpriseGlobalId], cliEnv);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`adminAccount:       admin@${code}`);
  });

  it('exits 1 with a clear message for an unknown enterprise', async () => {
    const result = await runCli(['enterprise', 'show', 'no-such-enterprise', '--json'], cliEnv);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr.trim()).toBe('keyward: no enterprise no-such-enterprise');
  });

  it('exits 1 naming the missing id, or with the usage when the subcommand is missing', async () => {
    const noId = await runCli(['enterprise', 'show'], cliEnv);
    expect(noId.code).toBe(1);
    // The error first, then one line pointing to the help: the whole help would bury it.
    expect(noId.stderr).toContain("missing required argument 'ENTERPRISE_GLOBAL_ID'");
    expect(noId.stderr).toContain('keyward enterprise show --help');
    const noCommand = await runCli(['enterprise'], cliEnv);
    expect(noCommand.code).toBe(1);
    expect(noCommand.stderr).toContain('keyward enterprise show ENTERPRISE_GLOBAL_ID');
  });
});
