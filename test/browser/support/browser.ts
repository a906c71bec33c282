import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from '../../support/harness.js';

/** Debian's Chromium (`apt-get install -y chromium`); playwright's own download does not work here. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The browser suite needs Chromium, which `npm ci` does not install. Without it the suite skips
 * locally with a note; CI sets KEYWARD_REQUIRE_BROWSER so it never silently skips there.
 */
export function browserAvailable(): boolean {
  if (process.env.KEYWARD_REQUIRE_BROWSER === '1') return true;
  const found = existsSync(CHROMIUM_PATH);
  if (!found)
    console.warn(`browser tests skipped: no Chromium at ${CHROMIUM_PATH} (apt-get install -y chromium)`);
  return found;
}

/** The flags a sandboxed machine with no internet needs (no background traffic, no GPU). */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

export interface ConsoleWorld {
  harness: Harness;
  /** The server's base URL, e.g. http://127.0.0.1:41234 */
  url: string;
  browser: Browser;
  /** A fresh browser context (its own cookies) per sign-in. */
  newPage(options?: {
    locale?: string;
  }): Promise<{ page: Page; context: BrowserContext; problems: string[] }>;
  close(): Promise<void>;
}

/** A real server on the suite's database, listening on a free port, and a headless Chromium. */
export async function startConsoleWorld(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  const harness = await startHarness(env);
  const url = await harness.app.listen({ port: 0, host: '127.0.0.1' });
  const browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // playwright gives the browser a fresh, empty profile of its own.
    args: CHROMIUM_ARGS,
  });
  const contexts: BrowserContext[] = [];
  return {
    harness,
    url,
    browser,
    async newPage(options = {}) {
      const context = await browser.newContext({ locale: options.locale ?? 'en-US', baseURL: url });
      contexts.push(context);
      const page = await context.newPage();
      // Script errors and console errors (a content-policy violation is one) collected for the test.
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() !== 'error') return;
        const where = message.location().url;
        // A page that answers 404 or 403 on purpose (another tenant's id) is logged as a failed
        // load of the document itself: not a problem of the page. Any sub-resource is.
        if (message.text().startsWith('Failed to load resource') && where === page.url()) return;
        problems.push(`console: ${message.text()} (${where})`);
      });
      return { page, context, problems };
    },
    async close() {
      for (const context of contexts) await context.close().catch(() => undefined);
      await browser.close();
      await harness.close();
    },
  };
}

/**
 * Opens the admin key's form on the operator sign-in page: folded under its summary once an
 * owner exists (on a database other test files share, one may).
 */
export async function openAdminKeyForm(page: Page): Promise<void> {
  const folded = page.locator('details.admin-key');
  if ((await folded.count()) > 0 && (await folded.getAttribute('open')) === null) {
    await folded.locator('summary').click();
  }
}

export async function signInOperator(page: Page): Promise<void> {
  await page.goto('/console/operator/sign-in');
  await openAdminKeyForm(page);
  await page.getByLabel('Admin key').fill(ADMIN_KEY);
  // The sign-in page may offer other ways in (each with its own button): this is the key's form.
  await page
    .locator('form', { has: page.getByLabel('Admin key') })
    .getByRole('button', { name: 'Sign in' })
    .click();
  await expect.poll(() => new URL(page.url()).pathname).toBe('/console/operator');
}

export async function signInEnterprise(page: Page, account: string, password: string): Promise<void> {
  await page.goto('/console/sign-in');
  await page.getByLabel('Account').fill(account);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect.poll(() => new URL(page.url()).pathname).toBe('/console/enterprise');
}
