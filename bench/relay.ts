import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from './processes.js';
import { freshNonce, summarize, type Measured } from './load.js';
import { customerId } from './seed.js';
import { CHANNEL, TARGET_TENANT } from './settings.js';
import type { Session } from './session.js';

// A relay in front of a closed network's machines (docs/relay.md): the vendor (the bench's
// server) grants a relay every seat of a lock; the relay (`keyward relay serve`, a real process on
// its embedded database) serves `machines` machines. Measured: their check-outs, `rounds` times
// over (each round every machine starts within one second, evenly spread, then all check in; a
// first round, not measured, warms the relay up), and
// their heartbeats, each machine beating once a second for `heartbeatSeconds` (sixty times what
// the runtime asks of it at the default lease), starts spread over the second.

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/keyward.js');

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export interface RelayBench {
  machines: number;
  rounds: number;
  heartbeatSeconds: number;
}

export interface RelayResult {
  checkOut: Measured;
  heartbeat: Measured;
}

interface Answer<T> {
  code: number | string;
  message: string;
  data: T;
}

async function json<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

function keyward(args: string[], env: Record<string, string>): void {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`keyward ${args.join(' ')}: ${result.stderr}`);
}

/** `keyward relay serve` on a free port; resolves once it answers /healthz. */
async function serveRelay(dir: string, env: Record<string, string>) {
  const port = await freePort();
  const child = spawn(process.execPath, [BIN, 'relay', 'serve', '--dir', dir, '--port', String(port)], {
    cwd: ROOT,
    env: {
      ...process.env,
      ...env,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000000',
      RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr.on('data', (chunk: Buffer) => (errors = (errors + chunk.toString()).slice(-4000)));
  const url = `http://127.0.0.1:${port}`;
  for (let waited = 0; ; waited += 200) {
    if (child.exitCode !== null) throw new Error(`relay serve exited: ${errors}`);
    if (waited > 60_000) throw new Error('relay serve did not start');
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** The vendor's lock for the relay: one product with a seat per machine. */
async function orderLock(
  vendor: string,
  session: Session,
  seats: number,
): Promise<{ assetNum: string; crmProductId: string }> {
  const tag = randomBytes(4).toString('hex');
  const lock = { assetNum: `RL-${tag}`, crmProductId: `RL-P-${tag}` };
  const answer = await json<Answer<unknown>>(
    await fetch(
      `${vendor}/order/api/order/v1/licenseOrder/batchOrder?appKey=${session.appKey}&g_nonce=${freshNonce()}`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${session.appToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          channelCode: CHANNEL,
          channelOrderId: `bench-relay-${tag}`,
          syncMode: 'sync',
          orderList: [
            {
              sequence: 1,
              customerId: customerId(TARGET_TENANT),
              orderType: 'new_buy',
              licenseType: 'normal_recover_lan_usbkey',
              assets: [
                {
                  assetNos: [lock.assetNum],
                  products: [{ ...lock, productUri: lock.crmProductId, limitConcurrent: seats }],
                },
              ],
            },
          ],
        }),
      },
    ),
    'the relay lock order',
  );
  if (answer.code !== 0) throw new Error(`the relay lock order: ${answer.message}`);
  return lock;
}

export async function runRelay(
  vendor: string,
  adminKey: string,
  session: Session,
  plan: RelayBench,
  log: (line: string) => void,
): Promise<RelayResult> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-bench-relay-'));
  const dir = path.join(scratch, 'relay');
  const machineEnv = {
    KEYWARD_RELAY_FINGERPRINT: 'bench-relay-machine',
    KEYWARD_ADMIN_KEY: '',
    DATA_DIR: '',
  };
  const lock = await orderLock(vendor, session, plan.machines);
  const jwks = path.join(scratch, 'vendor-jwks.json');
  fs.writeFileSync(jwks, await (await fetch(`${vendor}/.well-known/jwks.json`)).text());
  keyward(
    ['relay', 'init', '--dir', dir, '--vendor-jwks', jwks, '--ask', `${lock.assetNum}=${plan.machines}`],
    machineEnv,
  );
  const grant = await json<{ token: string }>(
    await fetch(`${vendor}/admin/relays/grants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request: fs.readFileSync(path.join(dir, 'request.jwt'), 'utf8').trim() }),
    }),
    'the grant',
  );
  fs.writeFileSync(path.join(scratch, 'grant.jwt'), grant.token);
  keyward(['relay', 'import', path.join(scratch, 'grant.jwt'), '--dir', dir], machineEnv);
  const relay = await serveRelay(dir, machineEnv);
  try {
    const relayKey = fs.readFileSync(path.join(dir, 'data', 'admin.key'), 'utf8').trim();
    const app = await json<{ appKey: string; appSecret: string }>(
      await fetch(`${relay.url}/admin/apps`, {
        method: 'POST',
        headers: { authorization: `Bearer ${relayKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench machines', scopes: ['auth_runtime'], channels: ['RELAY'] }),
      }),
      'the relay app',
    );
    const token = (
      await json<{ access_token: string }>(
        await fetch(`${relay.url}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({
            grant_type: 'client_credentials',
            client_id: app.appKey,
            client_secret: app.appSecret,
            scope: 'auth_runtime',
          }),
        }),
        'the relay token',
      )
    ).access_token;
    const call = async <T>(route: string, body: unknown): Promise<{ ms: number; data: T }> => {
      const started = performance.now();
      const response = await fetch(`${relay.url}/runtime/v1${route}?g_nonce=${freshNonce()}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Answer<T>;
      const ms = performance.now() - started;
      if (answer.code !== 0) throw new Error(`relay ${route}: ${String(answer.code)} ${answer.message}`);
      return { ms, data: answer.data };
    };
    const machines = Array.from({ length: plan.machines }, (_, i) => `bench-relay-fp-${i}`);
    const checkOuts: number[] = [];
    let leases: string[] = [];
    let began = performance.now();
    // Round 0 warms the relay up (its seat slots made, its statements prepared): not measured.
    for (let round = -1; round < plan.rounds; round += 1) {
      if (round === 0) began = performance.now();
      const spread = 1000 / machines.length;
      const taken = await Promise.all(
        machines.map(async (fingerprint, i) => {
          await sleep(i * spread);
          return call<{ leaseId: string }>('/leases', { ...lock, fingerprint });
        }),
      );
      if (round >= 0) for (const t of taken) checkOuts.push(t.ms);
      leases = taken.map((t) => t.data.leaseId);
      if (round < plan.rounds - 1) {
        await Promise.all(
          leases.map((leaseId, i) => call(`/leases/${leaseId}/check-in`, { fingerprint: machines[i] })),
        );
      }
    }
    const checkOut = summarize(checkOuts, (performance.now() - began) / 1000);
    log(`relay: ${checkOuts.length} check-outs, p99 ${checkOut.p99.toFixed(1)} ms`);
    const beats: number[] = [];
    const until = performance.now() + plan.heartbeatSeconds * 1000;
    const beatStart = performance.now();
    await Promise.all(
      leases.map(async (leaseId, i) => {
        let next = beatStart + (i * 1000) / leases.length;
        while (next < until) {
          await sleep(next - performance.now());
          beats.push((await call(`/leases/${leaseId}/heartbeat`, { fingerprint: machines[i] })).ms);
          next += 1000;
        }
      }),
    );
    const heartbeat = summarize(beats, (performance.now() - beatStart) / 1000);
    log(`relay: ${beats.length} heartbeats, p99 ${heartbeat.p99.toFixed(1)} ms`);
    return { checkOut, heartbeat };
  } finally {
    await relay.stop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
