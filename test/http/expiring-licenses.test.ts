import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorClient } from '../support/console-client.js';
import { ADMIN_KEY, startIsolatedHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, productSpec, type AssetWorld } from '../support/order-fixtures.js';
import { runCli } from '../support/server-process.js';
import { checkOut, fingerprint, leaseOf, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// Renewals in sight: licenses ending within LICENSE_EXPIRING_DAYS (30 by default), soonest first,
// with their seats in use, on the operator's dashboard, on each enterprise's page (its own only)
// and from `keyward licenses expiring`. A database of its own: the dashboard lists every
// enterprise's licenses, and other files' must not crowd these out.

const DAY = 86_400_000;

let h: Harness;
let mine: RuntimeWorld;
let theirs: AssetWorld;
let cliEnv: Record<string, string>;
const nums: Record<'tenDays' | 'threeDays' | 'twoMonths' | 'ended' | 'theirs', string> = {
  tenDays: '',
  threeDays: '',
  twoMonths: '',
  ended: '',
  theirs: '',
};

function ending(daysFromNow: number, limitConcurrent = 4) {
  return [productSpec({ limitEndDate: Date.now() + daysFromNow * DAY, limitConcurrent })];
}

beforeAll(async () => {
  h = await startIsolatedHarness();
  mine = await runtimeWorld(h);
  theirs = await assetWorld(h);
  nums.tenDays = await buyAsset(mine, ending(10));
  nums.threeDays = await buyAsset(mine, ending(3, 2));
  nums.twoMonths = await buyAsset(mine, ending(60));
  nums.ended = await buyAsset(mine, ending(-1));
  nums.theirs = await buyAsset(theirs, ending(5));
  // One machine runs the 10-day license: one of its four seats is in use.
  const product = (await h.database.db
    .selectFrom('product_instances as p')
    .innerJoin('assets as a', 'a.id', 'p.asset_id')
    .select('p.crm_product_id')
    .where('a.asset_num', '=', nums.tenDays)
    .executeTakeFirstOrThrow()) as { crm_product_id: string };
  leaseOf(
    await checkOut(mine, {
      assetNum: nums.tenDays,
      crmProductId: product.crm_product_id,
      fingerprint: fingerprint(),
    }),
  );
  cliEnv = { KEYWARD_URL: await h.app.listen({ port: 0, host: '127.0.0.1' }), KEYWARD_ADMIN_KEY: ADMIN_KEY };
});
afterAll(async () => {
  await h.close();
});

/** The asset numbers of the renewals section's rows, in their order. */
function rowsOf(body: string): string[] {
  const at = body.indexOf('data-expiring-licenses');
  expect(at, 'the renewals section').toBeGreaterThan(-1);
  const section = body.slice(at, body.indexOf('</section>', at));
  return [...section.matchAll(/<tr data-asset="([^"]+)"/g)].map((m) => m[1] as string);
}

/** The seats cell of one asset's row. */
function seatsOf(body: string, assetNum: string): string {
  const row = body.slice(body.indexOf(`data-asset="${assetNum}"`));
  return /<td[^>]* data-seats[^>]*>([^<]*)</.exec(row)?.[1] ?? '';
}

describe('licenses ending soon', () => {
  it('are on the operator’s dashboard, soonest first, with their seats in use, in both languages', async () => {
    const op = await operatorClient(h);
    const page = await op.get('/console/operator');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Licenses ending within 30 days');
    expect(rowsOf(page.body)).toEqual([nums.threeDays, nums.theirs, nums.tenDays]);
    expect(seatsOf(page.body, nums.tenDays)).toBe('1 of 4');
    expect(seatsOf(page.body, nums.threeDays)).toBe('0 of 2');
    expect(page.body).toContain('10 days</span>');
    expect(page.body).toContain(`href="/console/operator/enterprises/${mine.enterpriseGlobalId}"`);

    const zh = await op.get('/console/operator', { 'accept-language': 'zh-CN' });
    expect(zh.body).toContain('30 天内到期的许可');
    expect(seatsOf(zh.body, nums.tenDays)).toBe('1 / 4');
    expect(zh.body).toContain('10 天</span>');
  });

  it('are on an enterprise’s page: its own only', async () => {
    const op = await operatorClient(h);
    const page = await op.get(`/console/operator/enterprises/${mine.enterpriseGlobalId}`);
    expect(page.statusCode).toBe(200);
    expect(rowsOf(page.body)).toEqual([nums.threeDays, nums.tenDays]);
    expect(page.body).not.toContain(nums.theirs);

    const other = await op.get(`/console/operator/enterprises/${theirs.enterpriseGlobalId}`);
    expect(rowsOf(other.body)).toEqual([nums.theirs]);
  });

  it('are listed by keyward licenses expiring, tab-separated with a header, --days widening it', async () => {
    const run = await runCli(['licenses', 'expiring'], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = run.stdout.trim().split('\n');
    expect(header).toBe(
      'ends (UTC)\tdaysLeft\tasset\tproduct\tseatsUsed\tseatsLicensed\tenterprise\tchannel',
    );
    expect(rows.map((r) => r.split('\t')[2])).toEqual([nums.threeDays, nums.theirs, nums.tenDays]);
    const ten = rows[2]?.split('\t') ?? [];
    expect(ten[1]).toBe('10');
    expect(ten.slice(4, 8)).toEqual(['1', '4', 'Lending Ltd', mine.channel]);

    const wider = await runCli(['licenses', 'expiring', '--days', '90', '--json'], cliEnv);
    expect(wider.code, wider.stderr).toBe(0);
    const listed = JSON.parse(wider.stdout) as Array<{ assetNum: string; seatsUsed: number }>;
    expect(listed.map((l) => l.assetNum)).toEqual([
      nums.threeDays,
      nums.theirs,
      nums.tenDays,
      nums.twoMonths,
    ]);

    const theirsOnly = await runCli(
      ['licenses', 'expiring', '--enterprise', theirs.enterpriseGlobalId, '--json'],
      cliEnv,
    );
    expect((JSON.parse(theirsOnly.stdout) as Array<{ assetNum: string }>).map((l) => l.assetNum)).toEqual([
      nums.theirs,
    ]);
  });

  it('refuses a horizon it cannot use, before calling the server', async () => {
    const run = await runCli(['licenses', 'expiring', '--days', '0'], cliEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('expected whole days from 1 to 3650');
  });
});
