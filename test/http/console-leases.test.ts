import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { translator } from '../../src/http/console/i18n/index.js';
import { durationText } from '../../src/http/console/operator/duration.js';
import { operatorClient, type ConsoleClient } from '../support/console-client.js';
import { userToken } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
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
// leases live two hours past their last heartbeat here. Live leases and ended ones are two tables;
// an offline lease checked in early is ended, though it keeps its seat until it expires.

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
const fpOffline = fingerprint();
let scratch: string;

async function lockWith(overrides: Record<string, unknown> = {}): Promise<Lock> {
  const product = productSpec(overrides);
  return { assetNum: await buyAsset(world, [product]), crmProductId: product.crmProductId as string };
}

const page = (query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  op.get(`${LEASES}?${new URLSearchParams(query)}`, headers);

/** The fingerprints of the listed leases, top to bottom: each row's machine cell has it as title. */
function fingerprints(body: string, table?: 'live' | 'ended'): string[] {
  const part =
    table === undefined
      ? body
      : (body.split(`<table class="leases ${table}">`)[1] ?? '').split('</table>')[0]!;
  return [...part.matchAll(/<td data-kind="id" class="machine">.*?title="([^"]+)"/g)].map(
    (m) => m[1] as string,
  );
}

/** One lease's row, as markup. */
function rowOf(body: string, fp: string): string {
  const row = body.split('<tr data-lease=').find((r) => r.includes(`title="${fp}"`));
  expect(row, `a row for ${fp}`).toBeDefined();
  return (row as string).split('</tr>')[0] as string;
}

beforeAll(async () => {
  // Offline leases are signed with the keys in DATA_DIR.
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-console-leases-'));
  h = await startHarness({ RUNTIME_LEASE_SECONDS: '7200', DATA_DIR: scratch }, { now: () => clock });
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

  // An offline lease of a week, checked in at once: ended, its seat held until it expires.
  const days = await h.app.inject({
    method: 'POST',
    url: `/admin/apps/${world.app.appKey}/offline-lease-days`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { days: 7 },
  });
  expect(days.statusCode, days.body).toBe(200);
  const offline = leaseOf(await checkOut(world, { ...lock, fingerprint: fpOffline, offlineDays: 7 }));
  leaseOf(await checkIn(world, offline, fpOffline));
});
afterAll(async () => {
  await h?.close();
  if (scratch !== undefined) fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the Leases page', () => {
  it('sends a browser without an operator session to sign in', async () => {
    const anonymous = await h.app.inject({ method: 'GET', url: LEASES });
    expect(anonymous.statusCode).toBe(303);
    expect(anonymous.headers.location).toBe('/console/operator/sign-in?note=expired');
  });

  it('lists the live leases of a product, ended ones apart when asked, newest first', async () => {
    const live = await page({ product: lock.crmProductId });
    expect(live.statusCode).toBe(200);
    expect(live.headers['content-security-policy']).toContain("script-src 'self'");
    expect(fingerprints(live.body, 'live')).toEqual([fpLive]);
    const row = rowOf(live.body, fpLive);
    expect(row).toContain(`<code class="ident">${lock.crmProductId}</code>`);
    expect(row).toContain('Modeler &lt;b>Pro&lt;/b>');
    expect(row).not.toContain('<b>Pro</b>');
    // Each identifier links to its page: the lease's holds what the table leaves out (its app).
    expect(row).toMatch(/<a href="\/console\/operator\/leases\/[0-9a-f-]{36}"><code class="ident/);
    expect(row).toContain(
      `<a href="/console/operator/assets/${lock.assetNum}"><code class="ident">${lock.assetNum}</code>`,
    );
    expect(row).toContain(`<small class="sub">lock ${lock.assetNum}</small>`);
    expect(row).toContain('>online</span>');
    expect(live.body).toContain('href="/console/operator/leases" aria-current="page"');
    // The offline lease checked in early still holds its seat, but it is ended: not a live one.
    expect(fingerprints(live.body, 'ended')).toEqual([fpOffline]);
    expect(rowOf(live.body, fpOffline)).toContain('checked in');

    const all = await page({ product: lock.crmProductId, all: '1' });
    expect(fingerprints(all.body, 'live')).toEqual([fpLive]);
    expect(fingerprints(all.body, 'ended')).toEqual([fpOffline, fpEnded]);
    const ended = rowOf(all.body, fpEnded);
    expect(ended).toContain('checked in');
    expect(ended).toContain('<td data-kind="number" class="used">1 h 5 min</td>');
    expect(all.body).toContain('name="all" value="1" checked');
  });

  it('narrows the list by app key, asset number and product, and says when nothing matches', async () => {
    const byApp = fingerprints((await page({ app: world.app.appKey })).body);
    expect(byApp).toEqual(expect.arrayContaining([fpLive, fpMember]));
    expect(byApp).not.toContain(fpEnded);

    const byAsset = await page({ assetNum: memberAsset.assetNum });
    expect(fingerprints(byAsset.body)).toEqual([fpMember]);
    const row = rowOf(byAsset.body, fpMember);
    expect(row).toContain(`<small class="sub">member ${memberAccount}</small>`);
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
    // The live lease, and the offline one checked in early: its seat is held until it expires.
    if (ours !== undefined) expect(ours.seats).toBe(2);
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
    for (const words of [
      '有效的租约',
      '已结束的租约',
      '当前占用的席位',
      '机器',
      '已用时长',
      '包含已结束的租约',
    ]) {
      expect(zh.body).toContain(words);
    }
    const ended = rowOf(zh.body, fpEnded);
    expect(ended).toContain('已签入');
    expect(ended).toContain('1 小时 5 分钟');
    expect(rowOf(zh.body, fpLive)).toContain(`<small class="sub">锁 ${lock.assetNum}</small>`);
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
