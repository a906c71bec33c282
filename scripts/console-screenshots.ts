import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';

// `npx tsx scripts/console-screenshots.ts [NAME]`: starts a fresh embedded server, loads the demo
// data, and saves screenshots of the console's main pages to docs/img/ (shown in the README); with
// NAME, only the screenshots whose file name holds it (`usage`: the Usage pages, both languages).
// Needs Debian's Chromium (CHROMIUM_PATH, default /usr/bin/chromium).

const root = path.resolve(import.meta.dirname, '..');
const bin = path.join(root, 'bin/keyward.js');
const out = path.join(root, 'docs/img');
const adminKey = randomBytes(24).toString('base64url');
const dataDir = mkdtempSync(path.join(tmpdir(), 'keyward-screens-'));
const only = process.argv[2];

async function startServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, [bin, 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: '0',
      DATA_DIR: dataDir,
      KEYWARD_ADMIN_KEY: adminKey,
      LOG_FORMAT: 'json',
      // The demo's webhook receivers listen on this machine, over plain http.
      WEBHOOK_ALLOW_HTTP: '1',
      WEBHOOK_ALLOW_PRIVATE: '1',
    },
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
  app: { channel: string };
  enterprise: { enterpriseGlobalId: string };
  lending: { memberGlobalId: string };
  admin: { account: string; password: string };
  assets: Array<{ assetNum: string; licenseType: string; assignedTo: string | null }>;
  members: Array<{ account: string; password: string }>;
}

async function loadDemo(url: string): Promise<Demo> {
  const { stdout } = await promisify(execFile)(process.execPath, [bin, 'demo', '--json'], {
    cwd: root,
    env: { ...process.env, KEYWARD_URL: url, KEYWARD_ADMIN_KEY: adminKey },
  });
  return JSON.parse(stdout) as Demo;
}

async function postJson(url: string, body: unknown, headers: Record<string, string>): Promise<unknown> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${url}: ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * The demo has no running software: a second app of the demo's channel, with auth_runtime, checks
 * out a few seats as licensed software would, for a lock and for employees, and checks one in.
 */
async function checkOutDemoLeases(url: string, demo: Demo): Promise<{ lock: string; leaseId: string }> {
  const basic = (key: string, secret: string) =>
    `Basic ${Buffer.from(`${key}:${secret}`).toString('base64')}`;
  const app = (await postJson(
    `${url}/admin/apps`,
    { name: 'demo workstations', scopes: ['auth_runtime', 'auth_me'], channels: [demo.app.channel] },
    { authorization: `Bearer ${adminKey}` },
  )) as { appKey: string; appSecret: string };
  const token = async (body: Record<string, string>) =>
    (
      (await postJson(`${url}/oauth2/token`, body, {
        authorization: basic(app.appKey, app.appSecret),
      })) as { access_token: string }
    ).access_token;
  const appToken = await token({ grant_type: 'client_credentials' });
  const runtime = async (path: string, body: unknown, userToken?: string) =>
    (
      (await postJson(`${url}/runtime/v1${path}?g_nonce=${randomBytes(12).toString('base64url')}`, body, {
        authorization: `Bearer ${appToken}`,
        ...(userToken === undefined ? {} : { usertoken: userToken }),
      })) as { data: { leaseId: string } }
    ).data;
  const lock = demo.assets.find((a) => a.licenseType === 'normal_recover_usbkey')?.assetNum ?? '';
  const workstation = (n: number) => `WS-${String(n).padStart(3, '0')}-${randomBytes(6).toString('hex')}`;
  const viewer = await runtime('/leases', {
    assetNum: lock,
    crmProductId: 'demo-viewer',
    fingerprint: workstation(1),
  });
  const done = workstation(2);
  const analyzer = await runtime('/leases', {
    assetNum: lock,
    crmProductId: 'demo-analyzer',
    fingerprint: done,
  });
  await runtime(`/leases/${analyzer.leaseId}/check-in`, { fingerprint: done });
  await runtime('/leases', { assetNum: lock, crmProductId: 'demo-designer', fingerprint: workstation(3) });
  for (const [n, member, product] of [
    [4, 'bob', 'demo-simulator'],
    [5, 'bob', 'demo-designer'],
    [6, 'alice', 'demo-reporter'],
  ] as const) {
    const employee = demo.members.find((m) => m.account.startsWith(member));
    if (employee === undefined) continue;
    const userToken = await token({
      grant_type: 'password',
      username: employee.account,
      password: employee.password,
    });
    await runtime('/leases', { crmProductId: product, fingerprint: workstation(n) }, userToken);
  }
  return { lock, leaseId: viewer.leaseId };
}

/** A local receiver of the demo's webhooks: /crm answers 204, /erp is down (503). */
async function startReceiver(): Promise<{ url: string; close(): void }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () =>
      res.writeHead(req.url === '/erp' ? 503 : 204).end(req.url === '/erp' ? 'down for maintenance' : ''),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A CRM app of the demo's channel registers two endpoints once the demo is loaded, one healthy and
 * one down; the operator replays the demo's events to both (as `keyward webhooks replay` would),
 * and the server's worker sends them. Answers the failing endpoint's id.
 */
async function registerDemoWebhooks(
  url: string,
  demo: Demo,
  receiverUrl: string,
  since: Date,
): Promise<string> {
  const admin = { authorization: `Bearer ${adminKey}` };
  const app = (await postJson(
    `${url}/admin/apps`,
    { name: 'demo CRM', scopes: ['auth_webhooks'], channels: [demo.app.channel] },
    admin,
  )) as { appKey: string; appSecret: string };
  const token = (
    (await postJson(
      `${url}/oauth2/token`,
      { grant_type: 'client_credentials' },
      { authorization: `Basic ${Buffer.from(`${app.appKey}:${app.appSecret}`).toString('base64')}` },
    )) as { access_token: string }
  ).access_token;
  const endpoint = async (path: string, eventTypes?: string[]) =>
    (
      (await postJson(
        `${url}/v1/webhooks/endpoints?g_nonce=${randomBytes(12).toString('base64url')}`,
        { url: `${receiverUrl}${path}`, ...(eventTypes === undefined ? {} : { eventTypes }) },
        { authorization: `Bearer ${token}` },
      )) as { data: { id: string } }
    ).data.id;
  const healthy = await endpoint('/crm');
  const failing = await endpoint('/erp', [
    'order.accepted',
    'order.completed',
    'order.failed',
    'asset.locked',
  ]);
  const range = { from: since.toISOString(), to: new Date(Date.now() + 1000).toISOString() };
  for (const id of [healthy, failing])
    await postJson(`${url}/admin/webhooks/endpoints/${id}/replay`, range, admin);
  // The worker sends them within a few seconds: wait until none of the healthy one's is pending
  // and every one of the failing one's has had its first attempt.
  for (let tries = 0; tries < 60; tries++) {
    const response = await fetch(`${url}/admin/webhooks/deliveries?limit=1000`, { headers: admin });
    const rows = (await response.json()) as Array<{ endpointId: string; status: string; attempts: number }>;
    const waiting = rows.filter(
      (d) =>
        (d.endpointId === healthy && d.status === 'pending') ||
        (d.endpointId === failing && d.attempts === 0),
    );
    if (waiting.length === 0) break;
    await sleep(500);
  }
  return failing;
}

async function shoot(page: Page, name: string): Promise<void> {
  if (only !== undefined && !name.includes(only)) return;
  await page.screenshot({ path: path.join(out, `${name}.png`), fullPage: true });
  console.log(`docs/img/${name}.png`);
}

const receiver = await startReceiver();
const server = await startServer();
try {
  const since = new Date();
  const demo = await loadDemo(server.url);
  const drill = await checkOutDemoLeases(server.url, demo);
  const failingEndpoint = await registerDemoWebhooks(server.url, demo, receiver.url, since);
  mkdirSync(out, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
  });
  const desktop = await browser.newContext({ baseURL: server.url, viewport: { width: 1280, height: 800 } });
  const operator = await desktop.newPage();
  await operator.goto('/console');
  await shoot(operator, 'console-landing');
  await operator.goto('/console/operator/sign-in');
  await operator.getByLabel('Admin key').fill(adminKey);
  // The admin key's own form: the sign-in page may offer other ways in.
  await operator
    .locator('form', { has: operator.getByLabel('Admin key') })
    .getByRole('button', { name: 'Sign in' })
    .click();
  await operator.waitForURL('**/console/operator');
  const enterpriseId = demo.enterprise.enterpriseGlobalId;
  const operatorPages: Array<[string, string]> = [
    ['', 'console-operator-dashboard'],
    ['apps', 'console-operator-apps'],
    ['enterprises', 'console-operator-enterprises'],
    [`enterprises/${enterpriseId}`, 'console-operator-enterprise'],
    // One click on: the lock's page (its licenses and machines), then a machine's lease.
    [`assets/${encodeURIComponent(drill.lock)}`, 'console-operator-asset'],
    [`leases/${encodeURIComponent(drill.leaseId)}`, 'console-operator-lease'],
    ['orders', 'console-operator-orders'],
    // With the ended lease too: its reason and used time are part of what the page shows.
    ['leases?all=1', 'console-operator-leases'],
    ['webhooks', 'console-operator-webhooks'],
    // The endpoint that is down: its failed attempts, what they answered, and when the next is due.
    [`webhooks/${failingEndpoint}`, 'console-operator-webhook-deliveries'],
    ['audit', 'console-operator-audit'],
    // The demo's simulated month: curves, refusals and the licenses at capacity.
    ['usage', 'console-operator-usage'],
  ];
  // Each page in English, then in Chinese (the language cookie the selector sets): `-zh` names.
  for (const [lang, suffix] of [
    ['en', ''],
    ['zh-CN', '-zh'],
  ] as const) {
    await desktop.addCookies([{ name: 'keyward_lang', value: lang, url: server.url }]);
    for (const [page, name] of operatorPages) {
      await operator.goto(`/console/operator${page === '' ? '' : `/${page}`}`);
      await shoot(operator, `${name}${suffix}`);
    }
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
  const enterprisePages: Array<[string, string]> = [
    ['/console/enterprise', 'console-enterprise-employees'],
    // The employee who holds the demo's lent lock: his page has something in every section.
    [`/console/enterprise/members/${demo.lending.memberGlobalId}`, 'console-enterprise-employee'],
    ['/console/enterprise/assets', 'console-enterprise-assets'],
    ['/console/enterprise/lent-locks', 'console-enterprise-lent-locks'],
    ['/console/enterprise/usage', 'console-enterprise-usage'],
  ];
  for (const [lang, suffix] of [
    ['en', ''],
    ['zh-CN', '-zh'],
  ] as const) {
    await enterpriseContext.addCookies([{ name: 'keyward_lang', value: lang, url: server.url }]);
    for (const [page, name] of enterprisePages) {
      await enterprise.goto(page);
      await shoot(enterprise, `${name}${suffix}`);
    }
  }

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
  receiver.close();
  rmSync(dataDir, { recursive: true, force: true });
}
