import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  appToken,
  createApp,
  freshNonce,
  orderHeaders,
  postBatch,
  product,
  purchaseBatch,
  RUNTIME,
  type Answer,
  type LiveApp,
} from '../reliability/support/live-api.js';

// compose.yaml's proxy, for real: deploy/haproxy.cfg run by Debian's haproxy (the 2.6 branch the
// image pins), ports substituted, in front of two `keyward serve` processes on one PostgreSQL. One
// instance is killed with SIGKILL while license-runtime calls (POSTs with a body) stream through
// the proxy: every call sent after it died must succeed, the proxy retrying on the other instance
// those whose connection the dead one refused.
//
// PostgreSQL only: two instances cannot share the embedded database (one DATA_DIR, one process).
// CI installs haproxy (.ci/run), so there this runs on its PostgreSQL pass, never skips.

const ROOT = path.resolve(import.meta.dirname, '../..');
const url = testDatabaseUrl();
const haproxyInstalled = spawnSync('haproxy', ['-v']).status === 0;
const runs = url !== undefined && (haproxyInstalled || process.env.CI === 'true');

const ADMIN_KEY = randomBytes(16).toString('hex');
/** Clients, each one machine holding a lease: check-outs, then heartbeats, a check-out again now and then. */
const CLIENTS = 8;
/** Load before the kill, and after it: well past the health checks taking the dead instance out (≈ 2.5 s). */
const BEFORE_KILL_MS = 2_500;
const AFTER_KILL_MS = 7_000;
/** A bound on the run whatever the machine's speed. */
const MAX_CALLS = 6_000;

/** deploy/haproxy.cfg with its public port and the instances' addresses replaced: nothing else changes. */
function proxyConfig(port: number, instances: Record<string, string>): string {
  let text = fs.readFileSync(path.join(ROOT, 'deploy/haproxy.cfg'), 'utf8');
  const swap = (pattern: RegExp, replacement: string) => {
    expect(text.match(pattern) ?? [], String(pattern)).toHaveLength(1);
    text = text.replace(pattern, replacement);
  };
  swap(/^(\s*bind\s+):8080\s*$/gm, `$1127.0.0.1:${port}`);
  for (const [name, address] of Object.entries(instances)) {
    swap(new RegExp(`^(\\s*server\\s+${name}\\s+)${name}:8080\\b`, 'gm'), `$1${address}`);
  }
  return text;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const hostPort = (base: string) => new URL(base).host;

interface Proxy {
  base: string;
  child: ChildProcess;
  output(): string;
}

async function startProxy(dir: string, instances: Record<string, string>): Promise<Proxy> {
  const port = await freePort();
  const file = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(file, proxyConfig(port, instances));
  // -db: in the foreground, as the image runs it; its log lines (log stdout) come here.
  const child = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const base = `http://127.0.0.1:${port}`;
  for (let tries = 0; ; tries += 1) {
    if (child.exitCode !== null) throw new Error(`haproxy exited with ${child.exitCode}:\n${output}`);
    const ready = await fetch(`${base}/readyz`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (tries > 150) throw new Error(`haproxy did not answer /readyz:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { base, child, output: () => output };
}

/** A POST with the nonce its URL names, as a client makes it: no retries, whatever answers is the answer. */
async function post<T>(target: string, headers: Record<string, string>, body: unknown): Promise<Answer<T>> {
  const response = await fetch(target, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await response.text();
  let parsed: { code?: number | string; data?: T } = {};
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    // not JSON (a proxy's error page): `body` says what it was
  }
  return { status: response.status, code: parsed.code, data: parsed.data as T, body: text };
}

/** One call of the load: when it was sent and answered (performance.now()), and how. */
interface Sent {
  kind: 'check-out' | 'heartbeat';
  nonce: string;
  machine: string;
  start: number;
  end: number;
  status: number;
  code: number | string | undefined;
  leaseStatus?: string;
  body: string;
}

/** The nonce of a runtime call in the proxy's log line (`… "POST /runtime/v1/…?g_nonce=… HTTP/1.1"`). */
const loggedNonce = (line: string) => /[?&]g_nonce=([A-Za-z0-9_-]+)/.exec(line)?.[1];
/** The httplog field `actconn/feconn/beconn/srv_conn/retries`: retries is `+N` when the call was redispatched. */
const redispatched = (line: string) => /\s\d+\/\d+\/\d+\/\d+\/\+\d+\s/.test(line);

describe.runIf(runs)(
  'the proxy of compose.yaml (deploy/haproxy.cfg, run by haproxy) before two instances on PostgreSQL',
  () => {
    let dir: string;
    let a: ServerProcess;
    let b: ServerProcess;
    let proxy: Proxy | undefined;
    let app: LiveApp;
    let token: string;
    let license: { assetNum: string; crmProductId: string };

    beforeAll(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-proxy-'));
      const env = {
        DATABASE_URL: url as string,
        KEYWARD_ADMIN_KEY: ADMIN_KEY,
        DATA_DIR: path.join(dir, 'data'),
        // As compose.yaml sets it: the proxy is one hop.
        TRUST_PROXY: '1',
        // Each client is one machine calling far faster than a real one: the per-machine brake
        // would measure itself, not the failover.
        RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE: '0',
      };
      [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
      // A license the clients check out, set up on the instance that survives.
      app = await createApp(b.url, ADMIN_KEY, ['auth_order', 'auth_runtime']);
      token = await appToken(b.url, app);
      // A lock whose one product has a seat for every client's machine, and more.
      const licensed = product('Failover', { limitConcurrent: CLIENTS * 2 });
      const lock = purchaseBatch(app, { products: () => [licensed] });
      const bought = await postBatch(b.url, app, token, lock.body);
      expect(bought.code, bought.body).toBe(0);
      license = { assetNum: lock.assetNums[0] as string, crmProductId: licensed.crmProductId as string };
      proxy = await startProxy(dir, { 'keyward-1': hostPort(a.url), 'keyward-2': hostPort(b.url) });
    });

    afterAll(async () => {
      if (proxy !== undefined && proxy.child.exitCode === null) {
        const exited = new Promise((resolve) => proxy?.child.once('exit', resolve));
        proxy.child.kill('SIGTERM');
        await exited;
      }
      await Promise.all([a?.stop(), b?.stop()]);
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('hands the instances the caller’s address, not one the caller claims (TRUST_PROXY=1)', async () => {
      // From 127.0.0.2, claiming another address: the instances must see 127.0.0.2, which only the
      // proxy's own X-Forwarded-For entry can tell them (the connection they see is the proxy's).
      const nonce = freshNonce();
      const target = new URL(`${proxy?.base}${RUNTIME}/leases?g_nonce=${nonce}`);
      const status = await new Promise<number>((resolve, reject) => {
        const request = http.request(
          target,
          {
            method: 'POST',
            localAddress: '127.0.0.2',
            headers: { 'content-type': 'application/json', 'x-forwarded-for': '203.0.113.9' },
          },
          (response) => {
            response.resume();
            response.on('end', () => resolve(response.statusCode ?? 0));
          },
        );
        request.on('error', reject);
        request.end('{}');
      });
      // Refused by an instance (no app token: HTTP 299), which logged it with the caller's address.
      expect(status).toBe(299);
      const pattern = new RegExp(`^.*g_nonce=${nonce}.*$`, 'm');
      let line: RegExpExecArray | null = null;
      for (let tries = 0; line === null && tries < 100; tries += 1) {
        line = pattern.exec(a.output()) ?? pattern.exec(b.output());
        if (line === null) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(line, 'neither instance logged the call').not.toBeNull();
      const logged = JSON.parse((line as RegExpExecArray)[0]) as { req: { remoteAddress: string } };
      expect(logged.req.remoteAddress).toBe('127.0.0.2');
    });

    it('fails no call sent after one instance is killed (SIGKILL) under load', async () => {
      const base = (proxy as Proxy).base;
      const headers = orderHeaders(token);
      const run = randomBytes(4).toString('hex');
      const sent: Sent[] = [];
      const began = performance.now();
      let signalledAt = Number.POSITIVE_INFINITY;
      let killedAt = Number.POSITIVE_INFINITY;
      const going = () =>
        sent.length < MAX_CALLS && performance.now() < Math.min(began + 30_000, killedAt + AFTER_KILL_MS);

      const send = async (
        kind: Sent['kind'],
        machine: string,
        pathname: string,
        body: unknown,
      ): Promise<{ leaseId?: string }> => {
        // The nonce is the call's name in the proxy's log: made here, not by call().
        const nonce = freshNonce();
        const start = performance.now();
        let answer: Answer<{ status?: string; leaseId?: string } | undefined>;
        try {
          answer = await post(`${base}${pathname}?g_nonce=${nonce}`, headers, body);
        } catch (error) {
          answer = { status: 0, code: undefined, data: undefined, body: String(error) };
        }
        const record: Sent = {
          kind,
          nonce,
          machine,
          start,
          end: performance.now(),
          status: answer.status,
          code: answer.code,
          ...(answer.data?.status === undefined ? {} : { leaseStatus: answer.data.status }),
          body: answer.body.slice(0, 300),
        };
        sent.push(record);
        return answer.code === 0 && answer.data?.leaseId !== undefined
          ? { leaseId: answer.data.leaseId }
          : {};
      };

      const client = async (index: number) => {
        const machine = `failover-${run}-${index}`;
        let leaseId: string | undefined;
        for (let n = 0; going(); n += 1) {
          if (leaseId === undefined || n % 5 === 0) {
            // A check-out again resumes the machine's lease: the same lease id, no second seat.
            const checked = await send('check-out', machine, `${RUNTIME}/leases`, {
              ...license,
              fingerprint: machine,
            });
            leaseId = checked.leaseId ?? leaseId;
          } else {
            await send('heartbeat', machine, `${RUNTIME}/leases/${leaseId}/heartbeat`, {
              fingerprint: machine,
            });
          }
        }
      };

      const killer = async () => {
        await new Promise((resolve) => setTimeout(resolve, BEFORE_KILL_MS));
        const exited = new Promise((resolve) => a.child.once('exit', resolve));
        signalledAt = performance.now();
        a.child.kill('SIGKILL');
        await exited;
        // Gone, its sockets closed by the kernel: from here a connection to it is refused.
        killedAt = performance.now();
      };

      await Promise.all([killer(), ...Array.from({ length: CLIENTS }, (_, i) => client(i))]);

      const failed = (s: Sent) => s.status !== 200 || s.code !== 0;
      const before = sent.filter((s) => s.start < signalledAt);
      const during = sent.filter((s) => s.start >= signalledAt && s.start < killedAt);
      const after = sent.filter((s) => s.start >= killedAt);
      const logLines = new Map<string, string>();
      for (const line of (proxy as Proxy).output().split('\n')) {
        const nonce = loggedNonce(line);
        if (nonce !== undefined) logLines.set(nonce, line);
      }
      const retried = after.filter((s) => redispatched(logLines.get(s.nonce) ?? ''));
      // Calls sent before the instance was gone may fail: those it had taken (in flight, or accepted
      // by its socket while the kernel tore the process down) end in a 502 or a closed connection,
      // and the proxy rightly does not send them again. Once it is gone, its connections are
      // refused, and the proxy sends those calls to the other instance.
      const summary =
        `proxy failover: ${sent.length} calls in ${Math.round(performance.now() - began)} ms; ` +
        `${before.length} sent before the SIGKILL (${before.filter(failed).length} failed), ` +
        `${during.length} while the process died (${Math.round(killedAt - signalledAt)} ms; ` +
        `${during.filter(failed).length} failed), ${after.length} after it was gone ` +
        `(${after.filter(failed).length} failed, ${retried.length} retried on the other instance)`;
      console.log(summary);

      expect(before.length, summary).toBeGreaterThan(0);
      expect(after.length, summary).toBeGreaterThan(0);
      expect(
        after.filter(failed).map((s) => `${s.kind} ${s.status} ${s.body}\n  proxy: ${logLines.get(s.nonce)}`),
        summary,
      ).toEqual([]);
      // The dead instance was still in the proxy's rotation for some of those calls (until its
      // health checks failed): they succeeded because the proxy sent them to the other instance.
      expect(retried.length, `${summary}\n${(proxy as Proxy).output().slice(-3000)}`).toBeGreaterThan(0);
      // And a check-out sent again, by a client whose answer was lost or not, never took a second seat.
      for (const machine of new Set(sent.map((s) => s.machine))) {
        const granted = sent.filter((s) => s.machine === machine && s.leaseStatus === 'granted');
        expect(granted.length, machine).toBeLessThanOrEqual(1);
      }
    }, 120_000);
  },
);
