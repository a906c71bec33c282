import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translator } from '../../src/http/console/i18n/index.js';
import { durationText } from '../../src/http/console/operator/duration.js';
import { operatorClient, type ConsoleClient } from '../support/console-client.js';
import { userToken } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { addMember, assign, buyAsset, productSpec } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// The operator's Leases page: the admin API's lease listing and seats in use, behind the console
// sign-in. The runtime's clock is injected, so a lease can be used for an hour without waiting;
// leases live two hours past their last heartbeat here.

const LEASES = '/console/operator/leases';
let h: Harness;
let world: RuntimeWorld;
let op: ConsoleClient;
let clock = Date.now();

/** A lock and its product: check-outs name both. */
interface Lock {
  assetNum: string;
  crmProductId: string;
}

let lock: Lock;
let memberAsset: Lock;
const productUri = uniqueCode('uri-');
let memberAccount: string;
const fpLive = fingerprint();
const fpEnded = fingerprint();
const fpMember = fingerprint();

async function lockWith(overrides: Record<string, unknown> = {}): Promise<Lock> {
  const product = productSpec(overrides);
  return { assetNum: await buyAsset(world, [product]), crmProductId: product.crmProductId as string };
}

const page = (query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  op.get(`${LEASES}?${new URLSearchParams(query)}`, headers);

/** The fingerprints of the listed leases, top to bottom (each row's fingerprint is its title). */
function fingerprints(body: string): string[] {
  return [...body.matchAll(/<code class="fingerprint" title="([^"]+)"/g)].map((m) => m[1] as string);
}

/** One lease's row, as markup. */
function rowOf(body: string, fp: string): string {
  const row = body.split('<tr data-lease=').find((r) => r.includes(`title="${fp}"`));
  expect(row, `a row for ${fp}`).toBeDefined();
  return (row as string).split('</tr>')[0] as string;
}

beforeAll(async () => {
  h = await startHarness({ RUNTIME_LEASE_SECONDS: '7200' }, { now: () => clock });
  world = await runtimeWorld(h);
  op = await operatorClient(h);

  lock = await lockWith({ productName: 'Modeler <b>Pro</b>' });
  leaseOf(await checkOut(world, { ...lock, fingerprint: fpLive }));
  clock += 1000;
  const ended = leaseOf(await checkOut(world, { ...lock, fingerprint: fpEnded }));
  clock += 65 * 60_000;
  leaseOf(await checkIn(world, ended, fpEnded));

  memberAsset = await lockWith({ productUri });
  const member = await addMember(world);
  memberAccount = member.account;
  await assign(world, member.globalId, [memberAsset.assetNum]);
  const token = await userToken(h, world.app, member.account, member.password);
  leaseOf(await checkOut(world, { crmProductId: memberAsset.crmProductId, fingerprint: fpMember }, token));
});
afterAll(async () => h?.close());

describe('the Leases page', () => {
  it('sends a browser without an operator session to sign in', async () => {
    const anonymous = await h.app.inject({ method: 'GET', url: LEASES });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/operator/sign-in?note=expired');
  });

  it('lists the live leases of a product, ended ones too when asked, newest first', async () => {
    const live = await page({ product: lock.crmProductId });
    expect(live.statusCode).toBe(200);
    expect(live.headers['content-security-policy']).toContain("script-src 'self'");
    expect(fingerprints(live.body)).toEqual([fpLive]);
    const row = rowOf(live.body, fpLive);
    expect(row).toContain(`<code>${lock.crmProductId}</code>`);
    expect(row).toContain('Modeler &lt;b>Pro&lt;/b>');
    expect(row).not.toContain('<b>Pro</b>');
    expect(row).toContain(world.app.appKey);
    expect(row).toContain(`<td>${lock.assetNum}</td>`);
    expect(row).toContain('<small>lock</small><br/>' + lock.assetNum);
    expect(row).toMatch(/<td>no<\/td>/);
    expect(row).toContain('<td class="used">0 s</td>');
    expect(live.body).toContain('href="/console/operator/leases" aria-current="page"');

    const all = await page({ product: lock.crmProductId, all: '1' });
    expect(fingerprints(all.body)).toEqual([fpEnded, fpLive]);
    const ended = rowOf(all.body, fpEnded);
    expect(ended).toContain('checked in');
    expect(ended).toContain('<td class="used">1 h 5 min</td>');
    expect(all.body).toContain('name="all" value="1" checked');
  });

  it('narrows the list by app key, asset number and product, and says when nothing matches', async () => {
    const byApp = fingerprints((await page({ app: world.app.appKey })).body);
    expect(byApp).toEqual(expect.arrayContaining([fpLive, fpMember]));
    expect(byApp).not.toContain(fpEnded);

    const byAsset = await page({ assetNum: memberAsset.assetNum });
    expect(fingerprints(byAsset.body)).toEqual([fpMember]);
    const row = rowOf(byAsset.body, fpMember);
    expect(row).toContain(`<small>member</small><br/>${memberAccount}`);
    expect(byAsset.body).toContain(`value="${memberAsset.assetNum}"`);

    const both = await page({ product: memberAsset.crmProductId, app: world.app.appKey });
    expect(fingerprints(both.body)).toEqual([fpMember]);
    expect(fingerprints((await page({ product: productUri })).body)).toEqual([fpMember]);

    const otherApp = await page({ app: uniqueCode('kw_none'), all: '1' });
    expect(fingerprints(otherApp.body)).toEqual([]);
    expect(otherApp.body).toContain('No leases match these filters');
  });

  it('sums the seats in use per product above the list', async () => {
    const body = (await page()).body;
    const cards = [
      ...body.matchAll(/<div class="card" data-seats="([^"]+)"><span class="value">(\d+)</g),
    ].map((m) => ({ product: m[1] as string, seats: Number(m[2]) }));
    expect(cards.length).toBeGreaterThan(0);
    expect(cards.length).toBeLessThanOrEqual(20);
    expect(cards.map((c) => c.seats)).toEqual([...cards.map((c) => c.seats)].sort((a, b) => b - a));
    // On a shared database twenty busier products may fill the summary; otherwise ours is there.
    const ours = cards.find((c) => c.product === lock.crmProductId);
    if (ours !== undefined) expect(ours.seats).toBe(1);
    else expect(cards.length).toBe(20);
  });

  it('says when only the newest 100 leases are shown', async () => {
    const many = await lockWith({ limitConcurrent: null });
    for (let i = 0; i < 101; i++) leaseOf(await checkOut(world, { ...many, fingerprint: fingerprint() }));
    const body = (await page({ product: many.crmProductId })).body;
    expect(fingerprints(body)).toHaveLength(100);
    // The console's page budget (console-operator.test.ts) holds with a full list.
    expect(Buffer.byteLength(body)).toBeLessThan(150 * 1024);
    expect(body).toContain('Showing the newest 100 leases only');
    const fewer = (await page({ product: lock.crmProductId })).body;
    expect(fewer).not.toContain('Showing the newest');
  });

  it('refuses a control character in a filter with 400, naming the field', async () => {
    const answer = await page({ assetNum: 'bell\u0007' });
    expect(answer.statusCode).toBe(400);
    expect(answer.headers['content-type']).toContain('text/html');
    expect(answer.body).toContain('assetNum: must not contain the character U+0007');
  });

  it('speaks Chinese', async () => {
    const zh = await page({ product: lock.crmProductId, all: '1' }, { 'accept-language': 'zh-CN' });
    expect(zh.statusCode).toBe(200);
    expect(zh.body).toContain('<html lang="zh-CN"');
    for (const words of ['租约', '当前占用的席位', '持有者', '机器指纹', '已用时长', '包含已结束的租约']) {
      expect(zh.body).toContain(words);
    }
    const ended = rowOf(zh.body, fpEnded);
    expect(ended).toContain('已签入');
    expect(ended).toContain('1 小时 5 分钟');
    expect(rowOf(zh.body, fpLive)).toContain('<small>锁</small>');
  });

  it('writes a used time in its two largest units', () => {
    const en = translator('en');
    expect(durationText(en, 0)).toBe('0 s');
    expect(durationText(en, 59_999)).toBe('59 s');
    expect(durationText(en, 60_000)).toBe('1 min');
    expect(durationText(en, 3_900_000)).toBe('1 h 5 min');
    expect(durationText(en, 7_200_000)).toBe('2 h');
    expect(durationText(en, 2 * 86_400_000 + 3 * 3_600_000 + 59_000)).toBe('2 d 3 h');
    expect(durationText(en, 86_400_000 + 60_000)).toBe('1 d');
    expect(durationText(translator('zh-CN'), 3_900_000)).toBe('1 小时 5 分钟');
  });
});
