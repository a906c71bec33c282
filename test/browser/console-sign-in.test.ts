import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY } from '../support/harness.js';
import { assetWorld, type AssetWorld } from '../support/order-fixtures.js';
import {
  browserAvailable,
  openAdminKeyForm,
  signInEnterprise,
  signInOperator,
  startConsoleWorld,
  type ConsoleWorld,
} from './support/browser.js';

describe.runIf(browserAvailable())('console sign-in (Chromium)', () => {
  let world: ConsoleWorld;
  let enterprise: AssetWorld;

  beforeAll(async () => {
    world = await startConsoleWorld();
    enterprise = await assetWorld(world.harness);
  });
  afterAll(async () => {
    await world?.close();
  });

  it('signs the operator in with the admin key and keeps it out of browser storage', async () => {
    const { page, context } = await world.newPage();
    await signInOperator(page);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Dashboard');
    const cookies = await context.cookies();
    const session = cookies.find((c) => c.name === 'keyward_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/console' });
    expect(cookies.map((c) => c.value).join(' ')).not.toContain('test-admin-key');
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    expect(stored).not.toContain('test-admin-key');
  });

  it('signs an enterprise administrator in with account and password, and out again', async () => {
    const { page } = await world.newPage();
    await signInEnterprise(page, enterprise.admin.account, enterprise.admin.password);
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Employees');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toContain('signed out');
    await page.goto('/console/enterprise');
    expect(new URL(page.url()).pathname).toBe('/console/sign-in');
  });

  it('shows a wrong password next to the field, and Chinese when the browser asks for it', async () => {
    const { page } = await world.newPage({ locale: 'zh-CN' });
    await page.goto('/console/sign-in');
    await page.getByLabel('账号').fill(enterprise.admin.account);
    await page.getByLabel('密码').fill('not-the-password');
    await page.getByRole('button', { name: '登录' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('账号或密码错误');
    expect(await page.locator('#field-password').getAttribute('aria-invalid')).toBe('true');
  });

  it('switches language from the selector, with the console script running under the content policy', async () => {
    const { page, problems } = await world.newPage();
    await signInEnterprise(page, enterprise.admin.account, enterprise.admin.password);
    await page.getByLabel('Language').selectOption('zh-CN');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('员工');
    expect(new URL(page.url()).pathname).toBe('/console/enterprise');
    await page.getByLabel('语言').selectOption('en');
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Employees');
    expect(problems).toEqual([]);
  });

  it('shows the operator area in Chinese too, every page and its navigation', async () => {
    const { page, problems } = await world.newPage({ locale: 'zh-CN' });
    await page.goto('/console/operator/sign-in');
    await openAdminKeyForm(page);
    await page.getByLabel('管理密钥').fill(ADMIN_KEY);
    await page
      .locator('form', { has: page.getByLabel('管理密钥') })
      .getByRole('button', { name: '登录' })
      .click();
    await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('概览');
    for (const [link, heading] of [
      ['应用', '应用'],
      ['企业', '企业'],
      ['订单', '订单'],
      ['审计日志', '审计日志'],
    ] as const) {
      await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click();
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe(heading);
      expect(await page.locator('html').getAttribute('lang')).toBe('zh-CN');
    }
    // The side bar's title wraps between its words, never inside one: "控制台" stays on one line.
    const rects = await page.locator('.brand span').evaluate((span) => {
      const text = span.firstChild;
      if (text === null) return 0;
      const range = document.createRange();
      const at = (text.textContent ?? '').indexOf('控制台');
      range.setStart(text, at);
      range.setEnd(text, at + 3);
      return new Set(Array.from(range.getClientRects(), (r) => Math.round(r.top))).size;
    });
    expect(rects).toBe(1);
    expect(problems).toEqual([]);
  });
});
