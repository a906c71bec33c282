import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeJwt } from 'jose';
import type { ReportedHour } from '../../src/domain/relay/relay-report.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockWith, runtimeWorld, type RuntimeWorld } from '../http/runtime-helpers.js';
import { ADMIN_KEY } from '../support/harness.js';
import { signedIn } from '../support/operator-console.js';
import {
  HOUR_MS,
  lastWholeHour,
  newRelay,
  relayReport,
  relayRequest,
  relayReturn,
} from '../support/relay-files.js';
import {
  browserAvailable,
  openAdminKeyForm,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

// The Relays pages in Chromium (issue 42): the operator answers a relay's request, uploaded or
// pasted, and carries the grant away as text or a file; imports the relay's usage report and sees
// its figures beside the grant and the relay under "via relay" on the Usage page; imports its
// return. A support operator sees the grants and no form; the enterprise administrator sees his
// enterprise's grants only, and another enterprise's lock is refused as one that does not exist.
// Screenshots of each page in both languages go to /tmp (KEYWARD_SCREENSHOTS elsewhere).

const SHOTS = process.env.KEYWARD_SCREENSHOTS ?? os.tmpdir();
const LOCALES = [
  { locale: 'en-US', suffix: 'en' },
  { locale: 'zh-CN', suffix: 'zh' },
] as const;

/** Sign-ins by the fields' names, whatever the page's language. */
async function signIn(
  page: Page,
  as: { account: string; password: string } | { adminKey: string },
): Promise<void> {
  if ('adminKey' in as) {
    await page.goto('/console/operator/sign-in');
    await openAdminKeyForm(page);
    await page.locator('input[name="adminKey"]').fill(as.adminKey);
    await page.locator('form:has(input[name="adminKey"]) button[type="submit"]').click();
  } else {
    await page.goto('/console/sign-in');
    await page.locator('input[name="userName"]').fill(as.account);
    await page.locator('input[name="password"]').fill(as.password);
    await page.locator('form[method="post"] button[type="submit"]').click();
  }
  await page.waitForURL(/\/console\/(operator|enterprise)$/);
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Posts one of the page's forms with its file's text: pasted, or uploaded from `dir`. */
async function submit(
  page: Page,
  form: 'request' | 'report' | 'return',
  text: string,
  how: { paste: true } | { upload: string },
): Promise<void> {
  if ('paste' in how) {
    await page.locator(`#field-${form}`).fill(text);
  } else {
    fs.writeFileSync(how.upload, `${text}\n`);
    await page.locator(`#field-${form}-file`).setInputFiles(how.upload);
  }
  await Promise.all([
    page.waitForLoadState('load'),
    page.locator(`form[data-form="${form}"] button[type="submit"]`).click(),
  ]);
}

const cell = (page: Page, grantId: string, name: string) =>
  page.locator(`tr[data-grant="${grantId}"] td.${name}`).textContent();

describe.runIf(browserAvailable())('the Relays pages in the console (Chromium)', () => {
  let world: ConsoleWorld;
  let mine: RuntimeWorld;
  let other: RuntimeWorld;
  let dir: string;

  beforeAll(async () => {
    world = await startConsoleWorld();
    [mine, other] = [await runtimeWorld(world.harness), await runtimeWorld(world.harness)];
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relays-browser-'));
  }, 120_000);
  afterAll(async () => {
    fs.rmSync(dir, { recursive: true, force: true });
    await world?.close();
  });

  for (const { locale, suffix } of LOCALES) {
    it(
      `the operator grants seats to a relay, imports its report and its return (${locale})`,
      { timeout: 120_000 },
      async () => {
        const { page, problems } = await world.newPage({ locale });
        await page.setViewportSize({ width: 1280, height: 900 });
        await signIn(page, { adminKey: ADMIN_KEY });
        await page.goto('/console/operator');
        await page.locator('nav.main-nav a[href="/console/operator/relays"]').click();
        await page.waitForURL('**/console/operator/relays');

        // The request: uploaded in one language, pasted in the other.
        const relay = await newRelay();
        // A license with usage limits: the relay asks for its share of each.
        const license = await lockWith(other, {
          limitConcurrent: 6,
          limitTimeDuration: 360_000,
          limitAmount: 1000,
        });
        const request = await relayRequest(relay, [
          { ...license, seats: 4, timeSeconds: 36_000, amount: 200 },
        ]);
        const upload = path.join(dir, `${suffix}-request.jwt`);
        // In the other language, on terms: two machines listed, an overage of two seats.
        if (suffix !== 'en') {
          await page.locator('#field-machines').fill('lab-workstation-01\nlab-workstation-02');
          await page.locator('#field-overage').fill('2');
        }
        await submit(page, 'request', request, suffix === 'en' ? { upload } : { paste: true });
        const token = (await page.locator('#grant-text').inputValue()).trim();
        const claims = decodeJwt(token);
        expect(claims.sub).toBe(relay.relayId);
        expect(claims.overage).toEqual(
          suffix === 'en' ? { policy: 'refuse', seats: 0 } : { policy: 'allow', seats: 2 },
        );
        expect(claims.machines).toEqual(
          suffix === 'en' ? null : ['lab-workstation-01', 'lab-workstation-02'],
        );
        // The grant as a typed code too, to read out where not even a file may go.
        expect((await page.locator('#grant-code').inputValue()).trim()).toMatch(
          /^[0-9A-Z]{6}(-[0-9A-Z]{1,6})+$/,
        );
        const grantId = String(claims.jti);
        expect(await page.locator('.relay-answer').textContent()).toContain(
          `${license.assetNum}/${license.crmProductId} × 4`,
        );
        // The grant file downloads as `keyward relay grant` writes it.
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.locator('.relay-answer a[download]').click(),
        ]);
        expect(download.suggestedFilename()).toBe(`${relay.relayId}-grant.jwt`);
        const file = path.join(dir, `${suffix}-grant.jwt`);
        await download.saveAs(file);
        expect(fs.readFileSync(file, 'utf8').trim()).toBe(token);
        expect(await page.locator(`tr[data-grant="${grantId}"]`).getAttribute('data-state')).toBe('running');
        expect(await cell(page, grantId, 'licenses')).toContain(
          `${license.assetNum}/${license.crmProductId} × 4`,
        );
        await shoot(page, `relays-operator-granted-${suffix}`);

        // A report of 30 hours: pasted, it is longer than a console field's usual 4 KiB.
        const last = lastWholeHour();
        const hours = Array.from({ length: 30 }, (_, i): Partial<ReportedHour> => ({
          at: last - (29 - i) * HOUR_MS,
          peakSeats: i === 29 ? 4 : 1 + (i % 3),
          seatMs: HOUR_MS,
          refusals: i === 29 ? { '90005': 3 } : {},
        }));
        const report = await relayReport(relay, grantId, license, hours, [
          { ...license, timeSeconds: 5400, amount: 42 },
        ]);
        expect(report.length).toBeGreaterThan(4096);
        await submit(
          page,
          'report',
          report,
          suffix === 'en' ? { paste: true } : { upload: path.join(dir, `${suffix}-report.jwt`) },
        );
        expect(await page.locator('.notice.done').textContent()).toContain(relay.relayId);
        expect(await cell(page, grantId, 'peak')).toBe('4');
        expect(await cell(page, grantId, 'seat-hours')).toBe('30');
        expect(await cell(page, grantId, 'refused')).toBe('3');
        // The shares under the license, with what the report says was used of them.
        expect(await page.locator(`tr[data-grant="${grantId}"] .relay-share`).textContent()).toBe(
          suffix === 'en' ? 'time 1.5 / 10 h · amount 42 / 200' : '时长 1.5 / 10 小时 · 用量 42 / 200',
        );
        expect(await cell(page, grantId, 'last-report')).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d/);
        await shoot(page, `relays-operator-${suffix}`);

        // The relay on the Usage page, per hour over the report's days; its link narrows to it.
        const from = new Date(last - 29 * HOUR_MS).toISOString().slice(0, 10);
        const to = new Date(last).toISOString().slice(0, 10);
        await page.goto(`/console/operator/usage?bucket=hour&from=${from}&to=${to}`);
        const line = page.locator(`table.via-relay tr[data-relay="${relay.relayId}"]`);
        expect(await line.locator('td.peak').textContent()).toBe('4');
        expect(await line.locator('td.seat-hours').textContent()).toBe('30');
        await shoot(page, `usage-via-relay-${suffix}`);
        await line.locator('a').click();
        await page.waitForURL(/app=relay_/);
        expect(new URL(page.url()).searchParams.get('app')).toBe(relay.relayId);
        expect(await page.locator('#field-app').inputValue()).toBe(relay.relayId);
        expect(await page.locator('table.via-relay tbody tr').count()).toBe(1);

        // The return: the grant is returned, its seats free at the vendor at once.
        await page.goto('/console/operator/relays');
        await submit(
          page,
          'return',
          await relayReturn(relay, grantId),
          suffix === 'en' ? { upload: path.join(dir, `${suffix}-return.jwt`) } : { paste: true },
        );
        expect(await page.locator('.notice.done').textContent()).toContain(grantId);
        expect(await page.locator(`tr[data-grant="${grantId}"]`).getAttribute('data-state')).toBe('returned');
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width).toBeLessThanOrEqual(1280);
        expect(problems).toEqual([]);
      },
    );
  }

  it(
    'shows a support operator the grants and no form; an auditor neither page nor entry',
    { timeout: 60_000 },
    async () => {
      for (const role of ['support', 'auditor'] as const) {
        const { browser } = await signedIn(world.harness, role);
        const { page, context, problems } = await world.newPage();
        await context.addCookies([
          { name: 'keyward_session', value: browser.cookie.split('=')[1] ?? '', url: world.url },
        ]);
        await page.goto('/console/operator');
        const entry = page.locator('nav.main-nav a[href="/console/operator/relays"]');
        const answer = await page.goto('/console/operator/relays');
        if (role === 'support') {
          expect(answer?.status()).toBe(200);
          expect(await page.locator('table.relay-grants tbody tr').count()).toBeGreaterThan(0);
          expect(await page.locator('form[data-form]').count()).toBe(0);
          expect(await page.locator('textarea, input[type="file"]').count()).toBe(0);
          expect(await entry.count()).toBe(1);
        } else {
          expect(answer?.status()).toBe(404);
          expect(await entry.count()).toBe(0);
        }
        expect(problems).toEqual([]);
      }
    },
  );

  for (const { locale, suffix } of LOCALES) {
    it(
      `the enterprise administrator sees his grants only, and another enterprise's lock is refused (${locale})`,
      { timeout: 90_000 },
      async () => {
        const theirs = await newRelay();
        const theirLock = await lockWith(other, { limitConcurrent: 5 });
        const given = await world.harness.app.services.relayGrants.grant(
          await relayRequest(theirs, [{ ...theirLock, seats: 1 }]),
          { appId: null, operator: 'test', requestId: null, clientRequestId: null },
        );

        const { page, problems } = await world.newPage({ locale });
        await page.setViewportSize({ width: 1280, height: 900 });
        await signIn(page, { account: mine.admin.account, password: mine.admin.password });
        await page.locator('nav.main-nav a[href="/console/enterprise/relays"]').click();
        await page.waitForURL('**/console/enterprise/relays');

        const relay = await newRelay();
        const license = await lockWith(mine, { limitConcurrent: 5 });
        await submit(page, 'request', await relayRequest(relay, [{ ...license, seats: 2 }]), { paste: true });
        const grantId = String(decodeJwt((await page.locator('#grant-text').inputValue()).trim()).jti);
        await submit(page, 'report', await relayReport(relay, grantId, license, [{ peakSeats: 2 }]), {
          upload: path.join(dir, `ent-${suffix}-report.jwt`),
        });
        expect(await cell(page, grantId, 'peak')).toBe('2');
        const relays = await page
          .locator('table.relay-grants tbody tr')
          .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-relay')));
        expect(relays).toContain(relay.relayId);
        expect(relays).not.toContain(theirs.relayId);
        expect(await page.content()).not.toContain(given.grantId);

        // Another enterprise's lock: refused naming the field, as a lock that does not exist.
        const refusedRelay = await newRelay();
        const refused = await relayRequest(refusedRelay, [{ ...theirLock, seats: 1 }]);
        await submit(page, 'request', refused, { paste: true });
        expect(await page.locator('#field-request-error').textContent()).toContain(
          'asks.licenses[0].assetNum: no lock has this number',
        );
        expect(await page.getByRole('alert').textContent()).toContain('asks.licenses[0].assetNum');
        expect(await page.locator('#field-request').inputValue()).toBe(refused);
        expect(await page.locator('#grant-text').count()).toBe(0);
        const made = await world.harness.database.db
          .selectFrom('relay_grants')
          .select('id')
          .where('relay_id', '=', refusedRelay.relayId)
          .execute();
        expect(made).toEqual([]);
        await shoot(page, `relays-enterprise-${suffix}`);

        // The enterprise's usage page: the relay's figures, for its own enterprise.
        const day = new Date(lastWholeHour()).toISOString().slice(0, 10);
        await page.goto(`/console/enterprise/usage?bucket=hour&from=${day}&to=${day}`);
        const line = page.locator(`table.via-relay tr[data-relay="${relay.relayId}"]`);
        expect(await line.locator('td.peak').textContent()).toBe('2');
        expect(await line.locator('a').count()).toBe(0);
        expect(await page.locator(`tr[data-relay="${theirs.relayId}"]`).count()).toBe(0);
        await shoot(page, `usage-enterprise-via-relay-${suffix}`);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width).toBeLessThanOrEqual(1280);
        expect(problems).toEqual([]);
      },
    );
  }
});
