import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';

// `npx tsx scripts/console-screenshots.ts`: starts a fresh embedded server, loads the demo data,
// and saves screenshots of the console's main pages to docs/img/ (shown in the README).
// Needs Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium).

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin/keyward.js');
const out = path.join(root, 'docs/img');
const adminKey = randomBytes(24).toString('base64url');
const dataDir = mkdtempSync(path.join(tmpdir(), 'keyward-screens-'));

async function startServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd: root,
    env: { ...process.env, PORT: '0', DATA_DIR: dataDir, KEYWARD_ADMIN_KEY: adminKey, LOG_FORMAT: 'json' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) resolve(match[1]);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
  return { url, stop: () => child.kill('SIGTERM') };
}

interface Demo {
  admin: { account: string; password: string };
}

async function loadDemo(url: string): Promise<Demo> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'demo', '--json'], {
    cwd: root,
    env: { ...process.env, KEYWARD_URL: url, KEYWARD_ADMIN_KEY: adminKey },
  });
  return JSON.parse(stdout) as Demo;
}

async function shoot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  console.log(`docs/img/${name}.png`);
}

const server = await startServer();
try {
  const demo = await loadDemo(server.url);
  mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const desktop = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 } });
  const operator = await desktop.newPage();
  await operator.goto('/console/operator/sign-in');
  await operator.getByLabel('Admin key').fill(adminKey);
  await operator.getByRole('button', { name: 'Sign in' }).click();
  await operator.waitForURL('**/console/operator');
  await shoot(operator, 'console-operator-dashboard');
  for (const [page, name] of [
    ['apps', 'console-operator-apps'],
    ['orders', 'console-operator-orders'],
    ['audit', 'console-operator-audit'],
  ] as const) {
    await operator.goto(`/console/operator/${page}`);
    await shoot(operator, name);
  }

  const enterpriseContext = await browser.newContext({
    baseURL: server.url,
    viewport: { width: 1280, height: 800 },
  });
  const enterprise = await enterpriseContext.newPage();
  await enterprise.goto('/console/sign-in');
  await enterprise.getByLabel('Account').fill(demo.admin.account);
  await enterprise.getByLabel('Password').fill(demo.admin.password);
  await enterprise.getByRole('button', { name: 'Sign in' }).click();
  await enterprise.waitForURL('**/console/enterprise');
  await shoot(enterprise, 'console-enterprise-employees');
  await enterprise.goto('/console/enterprise/assets');
  await shoot(enterprise, 'console-enterprise-assets');

  const phone = await browser.newContext({
    baseURL: server.url,
    viewport: { width: 390, height: 844 },
    locale: 'zh-CN',
    deviceScaleFactor: 1,
  });
  const phonePage = await phone.newPage();
  await phonePage.goto('/console/sign-in');
  await phonePage.getByLabel('账号').fill(demo.admin.account);
  await phonePage.getByLabel('密码').fill(demo.admin.password);
  await phonePage.getByRole('button', { name: '登录' }).click();
  await phonePage.waitForURL('**/console/enterprise');
  await shoot(phonePage, 'console-enterprise-employees-phone-zh');
  await browser.close();
} finally {
  server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
