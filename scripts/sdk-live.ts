import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';

// The live half of the SDK conformance suite (sdks/conformance/README.md). Starts a real Keyward
// on the embedded database, gives each scenario program a world of its own (an app, a lock with a
// one-seat product), runs them side by side, and checks each step they report against the server.
// Each program reaches the server through a fault proxy of its own that loses the answer of its
// first consume (the server applied it; the program hears nothing): the SDK must send it again
// with the same Idempotency-Key, and the server must count it once.
//
//   npx tsx scripts/sdk-live.ts -- python3 sdks/python/tests/live_scenario.py
//   npx tsx scripts/sdk-live.ts --scenario 'c=sdks/c/build/live_scenario' --scenario 'go=...'
//   npx tsx scripts/sdk-live.ts --port 8099 --scenario ...   (or SDK_LIVE_PORT=8099)
//
// The server listens on --port, else $SDK_LIVE_PORT, else a port the system chooses (0): a fixed
// one lets a debugger or a packet capture be pointed at it before the run.
//
// Exit 0 when every scenario passed.

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/keyward.js');
const STEP_LIMIT_MS = 60_000;
/** The lease's life: a heartbeat is asked for every fifth of it, 10 s here (the server's minimum). */
const LEASE_SECONDS = 50;

interface Scenario {
  name: string;
  command: string[];
}

export interface LiveOptions {
  scenarios: Scenario[];
  /** The server's port; 0: the system chooses. */
  port: number;
}

function portFrom(text: string, from: string): number {
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65535)
    throw new Error(`${from} takes a port 0-65535, not ${text}`);
  return Number(text);
}

export function optionsFrom(argv: string[], env: NodeJS.ProcessEnv = {}): LiveOptions {
  const out: Scenario[] = [];
  let port = env.SDK_LIVE_PORT ? portFrom(env.SDK_LIVE_PORT, 'SDK_LIVE_PORT') : 0;
  const dash = argv.indexOf('--');
  const flags = dash === -1 ? argv : argv.slice(0, dash);
  for (let i = 0; i < flags.length; i += 1) {
    if (flags[i] === '--port') {
      port = portFrom(flags[i + 1] ?? '', '--port');
      i += 1;
      continue;
    }
    if (flags[i] !== '--scenario') throw new Error(`unknown argument ${flags[i]}`);
    const spec = flags[i + 1] ?? '';
    i += 1;
    const at = spec.indexOf('=');
    if (at <= 0) throw new Error(`--scenario takes name=command, not ${spec}`);
    out.push({
      name: spec.slice(0, at),
      command: spec
        .slice(at + 1)
        .split(' ')
        .filter(Boolean),
    });
  }
  if (dash !== -1) out.push({ name: 'scenario', command: argv.slice(dash + 1) });
  if (out.length === 0)
    throw new Error('no scenario given: sdk-live.ts -- <command> or --scenario name=command');
  return { scenarios: out, port };
}

async function startServer(
  dataDir: string,
  adminKey: string,
  port: number,
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: {
      ...process.env,
      PORT: String(port),
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      KEYWARD_ADMIN_KEY: adminKey,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      RUNTIME_LEASE_SECONDS: String(LEASE_SECONDS),
      WEBHOOK_WORKER: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve({ url: match[1], child });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
  });
}

/** A consume as the fault proxy saw it. */
interface ConsumeSeen {
  idempotencyKey: string | undefined;
  nonce: string | null;
  /** The server answered it, and the proxy closed the program's connection instead of passing it on. */
  dropped: boolean;
  /**
   * For one passed on: the product's consumption on the server, read before the answer is: the
   * program waits for it then, so its lease is still live (read later, the program may have
   * checked it in).
   */
  totalOnServer?: number;
}

/**
 * A proxy in front of the server that passes every call through, except the first consume: that
 * one is forwarded and answered by the server, and then the program's connection is closed with
 * no answer, as when a network fails after the server acted. Records every consume it sees.
 */
async function startFaultProxy(
  target: string,
  totalOf: (leaseId: string) => Promise<number>,
): Promise<{ url: string; consumes: ConsumeSeen[]; close(): void }> {
  const consumes: ConsumeSeen[] = [];
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const url = new URL(request.url ?? '/', target);
      const headers = { ...request.headers };
      delete headers.host;
      delete headers.connection;
      const upstream = http.request(url, { method: request.method, headers }, (answer) => {
        const body: Buffer[] = [];
        answer.on('data', (chunk: Buffer) => body.push(chunk));
        answer.on('end', () => void passOn());
        const passOn = async () => {
          if (request.method === 'POST' && url.pathname.endsWith('/consume')) {
            const dropped = consumes.length === 0;
            const key = request.headers['idempotency-key'];
            const seen: ConsumeSeen = {
              idempotencyKey: Array.isArray(key) ? key.join(',') : key,
              nonce: url.searchParams.get('g_nonce'),
              dropped,
            };
            consumes.push(seen);
            if (dropped) {
              request.socket.destroy();
              return;
            }
            const leaseId = /\/leases\/([^/]+)\/consume$/.exec(url.pathname)?.[1] ?? '';
            seen.totalOnServer = await totalOf(decodeURIComponent(leaseId)).catch(() => undefined);
          }
          const passed = { ...answer.headers };
          delete passed.connection;
          delete passed['keep-alive'];
          delete passed['transfer-encoding'];
          response.writeHead(answer.statusCode ?? 502, passed);
          response.end(Buffer.concat(body));
        };
      });
      upstream.on('error', () => request.socket.destroy());
      upstream.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    consumes,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** One scenario's world: an app holding auth_runtime and auth_order, and a lock with one seat. */
interface World {
  appKey: string;
  appSecret: string;
  assetNum: string;
  crmProductId: string;
  orderToken: string;
  channel: string;
}

function client(url: string, adminKey: string) {
  const admin = async (method: string, route: string, body?: unknown) => {
    const response = await fetch(`${url}/admin${route}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`admin ${route}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<Record<string, unknown>>;
  };
  const order = async (token: string, route: string, body: unknown) => {
    const nonce = randomBytes(12).toString('base64url');
    const response = await fetch(
      `${url}/order/api/order/v1${route}${route.includes('?') ? '&' : '?'}g_nonce=${nonce}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      },
    );
    const answer = (await response.json()) as { code: unknown; message?: string; data?: unknown };
    if (answer.code !== 0) throw new Error(`order ${route}: ${JSON.stringify(answer)}`);
    return answer.data;
  };
  const token = async (appKey: string, appSecret: string) => {
    const response = await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${appKey}:${appSecret}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: 'grant_type=client_credentials',
    });
    return ((await response.json()) as { access_token: string }).access_token;
  };
  return { admin, order, token };
}

async function seed(url: string, adminKey: string, name: string): Promise<World> {
  const { admin, order, token } = client(url, adminKey);
  const channel = `SDK${randomBytes(4).toString('hex')}`;
  const created = await admin('POST', '/apps', {
    name: `${name} conformance`,
    scopes: ['auth_order', 'auth_runtime'],
    channels: [channel],
  });
  const appKey = String(created.appKey);
  const appSecret = String(created.appSecret);
  await admin('POST', `/apps/${encodeURIComponent(appKey)}/offline-lease-days`, { days: 7 });
  const orderToken = await token(appKey, appSecret);
  const channelCustomerId = `cc-${randomBytes(4).toString('hex')}`;
  await order(orderToken, '/enterprise/user/bind', {
    channelCode: channel,
    channelCustomerId,
    customerName: `${name} Ltd`,
    enterpriseName: `${name} Ltd`,
  });
  const assetNum = `SDK${randomBytes(5).toString('hex')}`;
  const crmProductId = `P-${name}-${randomBytes(3).toString('hex')}`;
  await order(orderToken, `/licenseOrder/batchOrder?appKey=${encodeURIComponent(appKey)}`, {
    channelCode: channel,
    channelOrderId: `CO-${randomBytes(6).toString('hex')}`,
    syncMode: 'sync',
    orderList: [
      {
        sequence: 1,
        channelCustomerId,
        licenseType: 'normal_recover_usbkey',
        orderType: 'new_buy',
        assets: [
          {
            assetNos: [assetNum],
            products: [
              {
                crmProductId,
                productUri: 'sdk-conformance',
                productName: 'Conformance Suite',
                gmsPid: 'sdk-conformance',
                productType: 'tool',
                limitStartDate: Date.now() - 86_400_000,
                limitEndDate: Date.now() + 30 * 86_400_000,
                limitConcurrent: 1,
                limitAmount: 100,
              },
            ],
          },
        ],
      },
    ],
  });
  return { appKey, appSecret, assetNum, crmProductId, orderToken, channel };
}

/** What the program must report, in order; `check` also asks the server where that is the proof. */
interface Expected {
  step: string;
  check?: (line: Record<string, unknown>) => void | Promise<void>;
  /** Sent to the program's stdin once the step is reported. */
  reply?: () => Promise<string>;
}

function expectField(line: Record<string, unknown>, field: string, want: unknown): void {
  if (line[field] !== want) {
    throw new Error(
      `${line.step}: ${field} is ${JSON.stringify(line[field])}, expected ${JSON.stringify(want)}`,
    );
  }
}

async function runScenario(url: string, adminKey: string, scenario: Scenario): Promise<void> {
  const world = await seed(url, adminKey, scenario.name);
  const { admin, order, token } = client(url, adminKey);
  /**
   * The product's consumption as the server counts it, read without changing it: a consume of more
   * than any limit is refused (90007, nothing added, no key kept) with the total in its message.
   */
  const consumedOnServer = async (leaseId: string): Promise<number> => {
    const appToken = await token(world.appKey, world.appSecret);
    const nonce = randomBytes(12).toString('base64url');
    const response = await fetch(`${url}/runtime/v1/leases/${leaseId}/consume?g_nonce=${nonce}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${appToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ fingerprint: 'fp-live-first-machine', amount: 1_000_000_000 }),
    });
    const answer = (await response.json()) as { code: unknown; message?: string };
    const counted = /\((\d+) consumed,/.exec(answer.message ?? '');
    if (answer.code !== '90007' || counted?.[1] === undefined)
      throw new Error(`the consumed total could not be read: ${JSON.stringify(answer)}`);
    return Number(counted[1]);
  };
  // The product's consumption, read by the proxy while the program waits for its retried consume.
  const proxy = await startFaultProxy(url, (leaseId) => consumedOnServer(leaseId));
  const jwksFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-sdk-')), 'jwks.json');
  const leaseOf = async (leaseId: string) => {
    const leases = (await admin('GET', `/runtime/leases?asset=${world.assetNum}&all=1`)) as unknown as Array<
      Record<string, unknown>
    >;
    return leases.find((l) => l.leaseId === leaseId || l.id === leaseId);
  };
  let leaseId = '';
  const expected: Expected[] = [
    {
      step: 'checked-out',
      check: async (line) => {
        leaseId = String(line.leaseId);
        if ((await leaseOf(leaseId)) === undefined)
          throw new Error(`checked-out: no lease ${leaseId} on the server`);
        expectField(line, 'heartbeatIntervalSeconds', LEASE_SECONDS / 5);
      },
    },
    { step: 'heartbeats', check: (line) => expectField(line, 'count', 3) },
    {
      step: 'background',
      check: (line) => {
        if (typeof line.beats !== 'number' || line.beats < 1)
          throw new Error('background: no heartbeat sent by the SDK');
      },
    },
    {
      // Through the fault proxy: the first attempt's answer was lost, the SDK sent it again.
      step: 'consumed',
      check: async (line) => {
        expectField(line, 'consumed', 2);
        expectField(line, 'remaining', 98);
        const [first, ...retries] = proxy.consumes;
        if (first === undefined || retries.length === 0)
          throw new Error(
            `consumed: ${proxy.consumes.length} attempt(s) seen; the lost answer was not retried`,
          );
        const keys = new Set(proxy.consumes.map((seen) => seen.idempotencyKey));
        if (first.idempotencyKey === undefined || keys.size !== 1)
          throw new Error(`consumed: the attempts carried Idempotency-Key ${JSON.stringify([...keys])}`);
        const nonces = new Set(proxy.consumes.map((seen) => seen.nonce));
        if (nonces.size !== proxy.consumes.length)
          throw new Error('consumed: an attempt sent again carried the same g_nonce');
        const counted = retries[retries.length - 1]?.totalOnServer;
        if (counted !== 2) throw new Error(`consumed: the server counted ${String(counted)}, not 2`);
      },
    },
    { step: 'refused', check: (line) => expectField(line, 'code', '90005') },
    {
      step: 'checked-in',
      check: async () => {
        const lease = await leaseOf(leaseId);
        if (lease?.endReason !== 'checked_in')
          throw new Error(`checked-in: the server says ${JSON.stringify(lease)}`);
      },
    },
    {
      step: 'offline-verified',
      check: (line) => {
        expectField(line, 'assetNum', world.assetNum);
        expectField(line, 'expBound', 'offline-days');
      },
    },
    {
      step: 'await-revoke',
      // The operator's channel disables the lock (order op 6): the next heartbeat is refused.
      reply: async () => {
        await order(world.orderToken, '/asset/lock', {
          assetNums: [world.assetNum],
          operatorIdentity: 'sdk-live',
        });
        return 'revoked';
      },
    },
    { step: 'revoked', check: (line) => expectField(line, 'code', '90009') },
    { step: 'done' },
  ];

  const [command, ...args] = scenario.command;
  if (command === undefined) throw new Error(`${scenario.name}: empty command`);
  const child = spawn(command, args, {
    cwd: ROOT,
    env: {
      ...process.env,
      KEYWARD_URL: proxy.url,
      KEYWARD_APP_KEY: world.appKey,
      KEYWARD_APP_SECRET: world.appSecret,
      KEYWARD_ASSET_NUM: world.assetNum,
      KEYWARD_PRODUCT: world.crmProductId,
      KEYWARD_JWKS_FILE: jwksFile,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]();
  try {
    for (const want of expected) {
      const next = await Promise.race([
        lines.next(),
        new Promise<never>((_, reject) =>
          setTimeout(
            () => reject(new Error(`no "${want.step}" within ${STEP_LIMIT_MS / 1000} s`)),
            STEP_LIMIT_MS,
          ),
        ),
      ]);
      if (next.done) throw new Error(`the program ended before "${want.step}"`);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(next.value) as Record<string, unknown>;
      } catch {
        throw new Error(`not a JSON line: ${next.value}`);
      }
      if (line.step !== want.step) throw new Error(`expected step "${want.step}", got ${next.value}`);
      await want.check?.(line);
      if (want.reply) child.stdin?.write(`${await want.reply()}\n`);
      console.log(`[${scenario.name}] ${want.step} ✓`);
    }
    const code = await exited;
    if (code !== 0) throw new Error(`exited with ${code}`);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${scenario.name}: ${(error as Error).message}\n--- its stderr ---\n${stderr}`);
  } finally {
    proxy.close();
  }
}

async function main(): Promise<void> {
  const { scenarios, port } = optionsFrom(process.argv.slice(2), process.env);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-sdk-live-'));
  const adminKey = randomBytes(24).toString('base64url');
  const server = await startServer(dataDir, adminKey, port);
  console.log(`Keyward at ${server.url}; ${scenarios.length} scenario(s)`);
  const results = await Promise.allSettled(scenarios.map((s) => runScenario(server.url, adminKey, s)));
  server.child.kill('SIGTERM');
  fs.rmSync(dataDir, { recursive: true, force: true });
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  for (const failure of failed) console.error(String((failure.reason as Error).message));
  console.log(`${scenarios.length - failed.length} of ${scenarios.length} scenario(s) passed`);
  process.exit(failed.length === 0 ? 0 : 1);
}

// Run when started as a program; imported (by its test), it only defines.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href)
  await main();
