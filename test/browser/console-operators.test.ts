import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/domain/operators/totp.js';
import type { OperatorRole } from '../../src/domain/operators/roles.js';
import { ADMIN_KEY, nonce, uniqueCode } from '../support/harness.js';
import { assetWorld, okData, type AssetWorld } from '../support/order-fixtures.js';
import { browserAvailable, startConsoleWorld, type ConsoleWorld } from './support/browser.js';

// Named operators in Chromium (issue 32): an owner made through the admin API signs in with the
// one-time password, chooses a new one and enrols TOTP from the QR code's page; signs in again
// with password and code; adds a support operator, who sees no write control where the owner
// does and finds no Operators page. In English and in Chinese, with no content-policy violation
// or console error. KEYWARD_WRITE_SCREENSHOTS=1 saves the pages, in both languages, to docs/img.

const SHOTS =
  process.env.KEYWARD_WRITE_SCREENSHOTS === '1'
    ? path.resolve(import.meta.dirname, '../../docs/img')
    : undefined;

const VIEWPORT = { width: 1280, height: 800 };
const NEW_PASSWORD = 'correct horse battery staple';

type Locale = 'en' | 'zh-CN';
/** The page's language, as the language switch and the keyward_lang cookie name it. */
const LOCALES: Array<{ locale: Locale; suffix: string }> = [
  { locale: 'en', suffix: '' },
  { locale: 'zh-CN', suffix: '-zh' },
];

/** Messages the test reads, in each language (src/http/console/i18n/operators.ts). */
const TEXT = {
  en: {
    passwordOwed: 'You signed in with a one-time password',
    codeWrong: 'That code is not right. 4 tries left.',
    recoveryCodes: 'Recovery codes',
    notFound: 'Not found',
  },
  'zh-CN': {
    passwordOwed: '您使用的是一次性密码',
    codeWrong: '验证码不正确，还可尝试 4 次。',
    recoveryCodes: '恢复码',
    notFound: '未找到',
  },
} as const;

interface Operator {
  id: string;
  name: string;
  email: string;
  password: string;
}

async function shoot(page: Page, name: string): Promise<void> {
  if (SHOTS !== undefined) await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
}

/** Submits the form that holds `field` (pages have other forms: sign-out, language, …). */
async function submitFormOf(page: Page, field: string): Promise<void> {
  await page.locator(`form[method="post"]:has(${field}) button[type="submit"]`).click();
}

const pathOf = (page: Page) => new URL(page.url()).pathname;

/**
 * What a page offers to change: every form that posts (but signing out) and every button named as
 * the write actions are. `allowed` are forms the role may use (a support operator retries
 * deliveries).
 */
async function writeControls(page: Page, allowed: RegExp[] = []): Promise<string[]> {
  const actions = await page
    .locator('form')
    .evaluateAll((forms) =>
      forms
        .filter((f) => (f.getAttribute('method') ?? 'get').toLowerCase() === 'post')
        .map((f) => f.getAttribute('action') ?? ''),
    );
  const buttons = await page
    .locator('button, input[type="submit"], a.button')
    .evaluateAll((elements) =>
      elements.map((e) => (e instanceof HTMLInputElement ? e.value : (e.textContent ?? '')).trim()),
    );
  return [
    ...actions
      .filter((a) => a !== '/console/sign-out' && !allowed.some((r) => r.test(a)))
      .map((a) => `form ${a}`),
    ...buttons
      .filter((b) => /^(Approve|Disable|Enable|Rotate|Save|Replay|Activate|Create|Add)\b/.test(b))
      .map((b) => `button ${b}`),
  ];
}

describe.runIf(browserAvailable())('operator console sign-in, two-factor and roles (Chromium)', () => {
  let world: ConsoleWorld;
  let tenant: AssetWorld;
  let endpointId = '';
  /** Per language: the owner, their TOTP secret, their browser. */
  const owners = new Map<Locale, { operator: Operator; secret: string; page: Page; problems: string[] }>();
  let support: Operator | undefined;

  const admin = async (method: 'GET' | 'POST', url: string, payload?: object) => {
    const reply = await world.harness.app.inject({
      method,
      url: `/admin${url}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      ...(payload === undefined ? {} : { payload }),
    });
    expect(reply.statusCode, reply.body).toBe(200);
    return reply;
  };

  /** An operator through the admin API; `handle` begins the email (a name's Latin letters). */
  async function addOperator(
    role: OperatorRole,
    name: string,
    handle = name.toLowerCase().replace(/[^a-z]+/g, '.'),
  ): Promise<Operator> {
    const email = `${handle}.${uniqueCode('')}@example.com`;
    const body = (await admin('POST', '/operators', { name, email, role })).json<{
      operator: { id: string; email: string };
      password: string;
    }>();
    return { id: body.operator.id, name, email: body.operator.email, password: body.password };
  }

  /**
   * A fresh browser (its own cookies) in `locale`, which reports content-policy violations as
   * console errors: the world's listener collects those in `problems`.
   */
  async function browser(
    locale: Locale,
  ): Promise<{ page: Page; context: BrowserContext; problems: string[] }> {
    const opened = await world.newPage({ locale: locale === 'en' ? 'en-US' : 'zh-CN' });
    await opened.page.setViewportSize(VIEWPORT);
    opened.page.setDefaultTimeout(8000);
    await opened.context.addInitScript(() => {
      document.addEventListener(
        'securitypolicyviolation',
        (event) => console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`),
        true,
      );
    });
    await opened.context.addCookies([{ name: 'keyward_lang', value: locale, url: world.url }]);
    // Confirmations (disable, reset) are accepted.
    opened.page.on('dialog', (dialog) => void dialog.accept());
    return opened;
  }

  async function signInWithPassword(page: Page, email: string, password: string): Promise<void> {
    await page.goto('/console/operator/sign-in');
    await page.locator('input[name="email"]').fill(email);
    await page.locator('input[name="password"]').fill(password);
    await submitFormOf(page, 'input[name="email"]');
    await page.waitForURL((url) => url.pathname !== '/console/operator/sign-in');
  }

  /** The first sign-in: the one-time password, then a new one before anything else. */
  async function firstSignIn(page: Page, operator: Operator, locale: Locale): Promise<void> {
    await signInWithPassword(page, operator.email, operator.password);
    // Any page sends a session that owes a new password to the password page.
    await page.goto('/console/operator/apps');
    expect(pathOf(page)).toBe('/console/operator/account/password');
    expect(await page.locator('main').textContent()).toContain(TEXT[locale].passwordOwed);
    // Owed: the one-time password just given is not asked for again.
    expect(await page.locator('input[name="currentPassword"]').count()).toBe(0);
    await page.locator('input[name="password"]').fill(NEW_PASSWORD);
    await submitFormOf(page, 'input[name="password"]');
    await page.waitForURL((url) => url.pathname === '/console/operator');
  }

  beforeAll(async () => {
    world = await startConsoleWorld({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
    // Something to change on every page the roles are compared on: a pending app (Approve), an
    // enterprise (its member limit), a webhook endpoint (Replay); Offline machines has its form.
    tenant = await assetWorld(world.harness, ['auth_order', 'auth_me', 'auth_webhooks']);
    await world.harness.app.services.apps.create({
      name: uniqueCode('pending app '),
      scopes: ['auth_order'],
      channels: [uniqueCode('CH')],
      pending: true,
    });
    endpointId = okData<{ id: string }>(
      await world.harness.app.inject({
        method: 'POST',
        url: `/v1/webhooks/endpoints?g_nonce=${nonce()}`,
        headers: { authorization: `Bearer ${tenant.token}` },
        payload: { url: 'http://127.0.0.1:9/crm' },
      }),
    ).id;
  }, 120_000);
  afterAll(async () => {
    await world?.close();
  });

  for (const { locale, suffix } of LOCALES) {
    it(
      `an owner signs in with the one-time password, chooses a new one and enrols TOTP (${locale})`,
      { timeout: 60_000 },
      async () => {
        const operator =
          locale === 'en'
            ? await addOperator('owner', 'Ada Lindqvist')
            : await addOperator('owner', '林晓雯', 'lin.xiaowen');
        const { page, problems } = await browser('en');
        await page.goto('/console/operator/sign-in');
        if (locale === 'zh-CN') {
          // The side bar's language switch: the same page again, in Chinese.
          await page.locator('select[name="lang"]').selectOption('zh-CN');
          await expect.poll(() => page.locator('html').getAttribute('lang')).toBe('zh-CN');
          expect(pathOf(page)).toBe('/console/operator/sign-in');
        }
        // An owner exists: the admin key's form is folded beneath the email form.
        expect(await page.locator('details.admin-key input[name="adminKey"]').isVisible()).toBe(false);
        await shoot(page, `console-operator-sign-in${suffix}`);

        await firstSignIn(page, operator, locale);
        await page.goto('/console/operator/account');
        await page.locator('a[href="/console/operator/account/two-factor"]').click();
        await page.waitForURL('**/console/operator/account/two-factor');
        const qr = page.locator('img.qr');
        await qr.waitFor({ state: 'visible' });
        // The QR code is an SVG data URI that the content policy lets the browser decode.
        expect(await qr.getAttribute('src')).toMatch(/^data:image\/svg\+xml;base64,/);
        await expect
          .poll(() => qr.evaluate((img) => (img as HTMLImageElement).naturalWidth))
          .toBeGreaterThan(0);
        const box = await qr.boundingBox();
        expect(box?.width).toBeGreaterThanOrEqual(150);
        // The key as text, folded for those who cannot scan.
        await page.locator('details:has([data-secret]) summary').click();
        const secret = ((await page.locator('[data-secret]').textContent()) ?? '').trim();
        expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
        await shoot(page, `console-operator-two-factor${suffix}`);

        await page.locator('input[name="code"]').fill(totpCode(secret, Date.now()));
        await submitFormOf(page, 'input[name="code"]');
        await page.locator('ul.recovery-codes').waitFor();
        expect(await page.locator('h1').textContent()).toBe(TEXT[locale].recoveryCodes);
        const codes = await page.locator('ul.recovery-codes li code').allTextContents();
        expect(codes).toHaveLength(10);
        expect(new Set(codes).size).toBe(10);
        for (const code of codes) expect(code).toMatch(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
        await shoot(page, `console-operator-recovery-codes${suffix}`);
        // Shown once: the page again is the account page, which does not show them.
        await page.goto('/console/operator/account/two-factor');
        expect(pathOf(page)).toBe('/console/operator/account');
        expect(await page.content()).not.toContain(codes[0]);

        expect(problems).toEqual([]);
        owners.set(locale, { operator, secret, page, problems });
      },
    );

    it(
      `signs out and in again: a wrong code refused with a message, the right one lets the owner in (${locale})`,
      { timeout: 60_000 },
      async () => {
        const owner = owners.get(locale);
        if (owner === undefined) throw new Error('the enrolment test did not pass');
        const { page, problems } = owner;
        await page.locator('form.sign-out button[type="submit"]').click();
        await page.waitForURL((url) => !url.pathname.startsWith('/console/operator/account'));
        expect(await page.locator('form.sign-out').count()).toBe(0);

        await signInWithPassword(page, owner.operator.email, NEW_PASSWORD);
        expect(pathOf(page)).toBe('/console/operator/sign-in/code');
        // No navigation until the code is given, and nothing else opens.
        expect(await page.locator('nav.main-nav a[href^="/console/operator"]').count()).toBe(0);
        await page.goto('/console/operator/operators');
        expect(pathOf(page)).toBe('/console/operator/sign-in/code');
        expect(await page.locator('html').getAttribute('lang')).toBe(locale);

        const right = totpCode(owner.secret, Date.now() + 30_000);
        await page.locator('input[name="code"]').fill(right === '000000' ? '111111' : '000000');
        await submitFormOf(page, 'input[name="code"]');
        await page.locator('.notice.error, [role="alert"]').first().waitFor();
        expect(pathOf(page)).toBe('/console/operator/sign-in/code');
        expect(await page.locator('main').textContent()).toContain(TEXT[locale].codeWrong);
        expect(await page.locator('input[name="code"]').getAttribute('aria-invalid')).toBe('true');
        await shoot(page, `console-operator-sign-in-code${suffix}`);

        // The current step was spent at enrolment: the next one.
        await page.locator('input[name="code"]').fill(totpCode(owner.secret, Date.now() + 30_000));
        await submitFormOf(page, 'input[name="code"]');
        await page.waitForURL((url) => url.pathname === '/console/operator');
        expect(await page.locator('.sidebar .who').textContent()).toBe(owner.operator.name);
        expect(
          await page.locator('nav.main-nav a[href="/console/operator/operators"]').count(),
          'an owner has the Operators entry',
        ).toBe(1);
        expect(problems).toEqual([]);
      },
    );
  }

  it(
    'an owner adds a support operator, whose one-time password is shown once',
    { timeout: 60_000 },
    async () => {
      const owner = owners.get('en');
      if (owner === undefined) throw new Error('the sign-in test did not pass');
      const { page, problems } = owner;
      await page.goto('/console/operator/operators');
      const name = 'Sam Okafor';
      const email = `sam.${uniqueCode('')}@example.com`;
      await page.locator('#field-name').fill(name);
      await page.locator('#field-email').fill(email);
      await page.locator('#field-role').selectOption('support');
      await submitFormOf(page, '#field-name');
      const shown = page.locator('pre.secret');
      await shown.waitFor({ state: 'visible' });
      const password = ((await shown.textContent()) ?? '').trim();
      expect(password.length).toBeGreaterThanOrEqual(16);
      const row = page.locator(`tr[data-operator="${email}"]`);
      expect(await row.locator('select[name="role"]').inputValue()).toBe('support');
      // Once: the page again shows no password.
      await page.goto('/console/operator/operators');
      expect(await page.locator('pre.secret').count()).toBe(0);
      expect(await page.content()).not.toContain(password);
      const id = (await admin('GET', '/operators'))
        .json<Array<{ id: string; email: string }>>()
        .find((o) => o.email === email)?.id;
      expect(id).toBeDefined();
      support = { id: id ?? '', name, email, password };
      expect(problems).toEqual([]);
    },
  );

  it(
    'a support operator sees no write control where the owner does, and no Operators page',
    { timeout: 90_000 },
    async () => {
      const owner = owners.get('en');
      if (owner === undefined || support === undefined) throw new Error('the earlier tests did not pass');
      const { page, problems } = await browser('en');
      await firstSignIn(page, support, 'en');
      expect(await page.locator('.sidebar .who').textContent()).toBe(support.name);
      expect(await page.locator('nav.main-nav a[href="/console/operator/operators"]').count()).toBe(0);
      expect(await page.locator('nav.main-nav a[href="/console/operator/apps"]').count()).toBe(1);

      const pages = [
        '/console/operator/apps',
        `/console/operator/enterprises/${tenant.enterpriseGlobalId}`,
        `/console/operator/webhooks/${endpointId}`,
        '/console/operator/offline-machines',
      ];
      for (const url of pages) {
        const answer = await page.goto(url);
        expect(answer?.status(), url).toBe(200);
        // A support operator may retry a delivery: that form is not a write control here.
        expect(await writeControls(page, [/\/retry$/]), url).toEqual([]);
        const seen = await owner.page.goto(url);
        expect(seen?.status(), url).toBe(200);
        expect((await writeControls(owner.page)).length, url).toBeGreaterThan(0);
      }
      // The owner's buttons by name, on the pages that hold them.
      await owner.page.goto('/console/operator/apps');
      for (const label of ['Approve', 'Rotate secret', 'Save', 'Create app'])
        expect(await owner.page.getByRole('button', { name: label }).count(), label).toBeGreaterThan(0);
      await owner.page.goto(`/console/operator/webhooks/${endpointId}`);
      expect(await owner.page.getByRole('button', { name: 'Replay', exact: true }).count()).toBe(1);
      await owner.page.goto('/console/operator/offline-machines');
      expect(await owner.page.getByRole('button', { name: 'Activate', exact: true }).count()).toBe(1);

      // The Operators page is not there for support: the not-found page, as for any unknown path.
      const refused = await page.goto('/console/operator/operators');
      expect(refused?.status()).toBe(404);
      expect(await page.locator('main').textContent()).toContain(TEXT.en.notFound);
      expect(await page.content()).not.toContain(owner.operator.email);

      expect(problems).toEqual([]);
      expect(owner.problems).toEqual([]);
    },
  );

  it('shows the account and the operators pages in both languages', { timeout: 60_000 }, async () => {
    const owner = owners.get('en');
    if (owner === undefined) throw new Error('the sign-in test did not pass');
    const { page, problems } = owner;
    // A few more operators for the owner's page: an admin, an auditor, one disabled.
    await addOperator('admin', 'Priya Raman');
    const auditor = await addOperator('auditor', 'Jonas Weber');
    await admin('POST', `/operators/${auditor.id}/disable`);
    // A personal token on the account page.
    await page.goto('/console/operator/account');
    await page.locator('input[name="name"]').fill('release pipeline');
    await page.locator('select[name="role"]').selectOption('support');
    await submitFormOf(page, 'input[name="days"]');
    await page.locator('pre.secret').waitFor({ state: 'visible' });
    for (const { locale, suffix } of LOCALES) {
      await page.context().addCookies([{ name: 'keyward_lang', value: locale, url: world.url }]);
      await page.goto('/console/operator/account');
      expect(await page.locator('html').getAttribute('lang')).toBe(locale);
      expect(await page.locator('pre.secret').count()).toBe(0);
      await shoot(page, `console-operator-account${suffix}`);
      await page.goto('/console/operator/operators');
      expect(await page.locator('table.operators tbody tr').count()).toBeGreaterThanOrEqual(5);
      // The actions wrap rather than push the table past its box (and the page past 1280 pixels).
      const fits = await page.locator('table.operators').evaluate((table) => {
        const wrap = table.closest('.table-wrap');
        return wrap !== null && wrap.scrollWidth <= wrap.clientWidth;
      });
      expect(fits, `the operators table fits (${locale})`).toBe(true);
      await shoot(page, `console-operators${suffix}`);
    }
    expect(problems).toEqual([]);
  });
});
