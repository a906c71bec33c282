import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// The SDKs against a relay (docs/relay.md), unchanged but for their base URL: a real vendor
// (`keyward serve`, embedded, with the demo data) grants a relay two seats of the demo lock's
// Simulator; the relay (`keyward relay serve`) serves them; the C SDK's modeler example and a
// Python program check out from the relay with offline leases, and verify them with the vendor's
// key set alone, fetched from the vendor, never the relay's. A third machine is refused: the
// grant gave two seats. Run by sdks/ci.sh after the SDKs are built.
//
//   npx tsx scripts/sdk-relay.ts        (needs sdks/c/build/examples/modeler and python3)
//
// Exit 0 when every step passed.

const ROOT = path.resolve(import.meta.dirname, '..');
const BIN = path.join(ROOT, 'bin/keyward.js');
const MODELER = path.join(ROOT, 'sdks/c/build/examples/modeler');
const PRODUCT = 'demo-simulator';
const SEATS = 2;
const START_LIMIT_MS = 90_000;

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-sdk-relay-'));
const children: ChildProcess[] = [];

function step(what: string): void {
  console.log(`== ${what}`);
}

function fail(message: string): never {
  throw new Error(message);
}

/** Starts a Keyward process and resolves with its URL once it listens. */
function start(args: string[], env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOG_FORMAT: 'json', LOG_LEVEL: 'info', WEBHOOK_WORKER: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${args.join(' ')} did not start:\n${output}`)),
      START_LIMIT_MS,
    );
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(output);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args.join(' ')} exited with ${code}:\n${output}`));
    });
  });
}

/** Runs a command to its end; fails the run unless it exits 0. Answers its standard output. */
function run(command: string, args: string[], env: Record<string, string>, what: string): string {
  const result = spawnSync(command, args, { cwd: ROOT, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) {
    fail(`${what} exited with ${result.status}:\n${result.stdout}\n${result.stderr}`);
  }
  return result.stdout;
}

function keyward(args: string[], env: Record<string, string>): string {
  return run(process.execPath, [BIN, ...args], env, `keyward ${args.join(' ')}`);
}

async function admin(
  base: string,
  key: string,
  method: string,
  url: string,
  body?: unknown,
): Promise<unknown> {
  const response = await fetch(`${base}/admin${url}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) fail(`${method} ${url}: ${response.status} ${text}`);
  return JSON.parse(text) as unknown;
}

async function main(): Promise<void> {
  if (!fs.existsSync(MODELER)) fail(`${MODELER} is not built: run sdks/c/ci.sh first`);
  const vendorKey = randomBytes(24).toString('base64url');
  const vendorEnv = { DATA_DIR: path.join(scratch, 'vendor'), KEYWARD_ADMIN_KEY: vendorKey };

  step('the vendor: keyward serve with the demo data');
  const vendor = await start(['serve'], vendorEnv);
  const atVendor = { KEYWARD_URL: vendor, KEYWARD_ADMIN_KEY: vendorKey };
  const facts = JSON.parse(keyward(['demo', '--json'], atVendor)) as { runtime: { online: string } };
  const lock = /LOCK=(\S+)/.exec(facts.runtime.online)?.[1] ?? fail('the demo names no lock');
  const vendorJwks = await (await fetch(`${vendor}/.well-known/jwks.json`)).text();
  const vendorJwksFile = path.join(scratch, 'vendor-jwks.json');
  fs.writeFileSync(vendorJwksFile, vendorJwks);

  step(`the relay: init, grant (${SEATS} seats of ${lock}/${PRODUCT}), import, serve`);
  const dir = path.join(scratch, 'relay');
  const atRelayMachine = { KEYWARD_RELAY_FINGERPRINT: 'sdk-relay-machine-01', KEYWARD_ADMIN_KEY: '' };
  keyward(
    ['relay', 'init', '--dir', dir, '--vendor-jwks', vendorJwksFile, '--ask', `${lock}/${PRODUCT}=${SEATS}`],
    atRelayMachine,
  );
  const grantFile = path.join(scratch, 'grant.jwt');
  keyward(['relay', 'grant', path.join(dir, 'request.jwt'), '--out', grantFile], atVendor);
  keyward(['relay', 'import', grantFile, '--dir', dir], atRelayMachine);
  const relay = await start(['relay', 'serve', '--dir', dir], atRelayMachine);
  const relayKey = fs.readFileSync(path.join(dir, 'data', 'admin.key'), 'utf8').trim();
  const app = (await admin(relay, relayKey, 'POST', '/apps', {
    name: 'closed network',
    scopes: ['auth_runtime'],
    channels: ['RELAY'],
  })) as { appKey: string; appSecret: string };
  await admin(relay, relayKey, 'POST', `/apps/${encodeURIComponent(app.appKey)}/offline-lease-days`, {
    days: 3,
  });
  const machine = { KEYWARD_URL: relay, KEYWARD_APP_KEY: app.appKey, KEYWARD_APP_SECRET: app.appSecret };

  step('C: the modeler example checks out from the relay with an offline lease');
  const state = path.join(scratch, 'modeler');
  const ran = run(
    MODELER,
    ['run', lock, PRODUCT, '--seconds', '2', '--offline-days', '1'],
    { ...machine, MODELER_STATE_DIR: state },
    'modeler run',
  );
  if (!/^lease \S+ \(granted\) for demo-simulator on \S+: 2 seats/m.test(ran))
    fail(`modeler run said:\n${ran}`);
  // The keys it kept came from the relay's JWKS route; verified here with the vendor's own.
  fs.copyFileSync(vendorJwksFile, path.join(state, 'jwks.json'));
  const verified = run(MODELER, ['verify'], { ...machine, MODELER_STATE_DIR: state }, 'modeler verify');
  if (!verified.startsWith('offline lease verified: demo-simulator'))
    fail(`modeler verify said:\n${verified}`);
  console.log(verified.trim());
  // And only with them: a key set without the vendor's key verifies nothing.
  const vendorKeys = JSON.parse(vendorJwks) as { keys: Array<{ x: string }> };
  const stranger = { keys: vendorKeys.keys.map((k) => ({ ...k, x: randomBytes(32).toString('base64url') })) };
  fs.writeFileSync(path.join(state, 'jwks.json'), JSON.stringify(stranger));
  const refused = spawnSync(MODELER, ['verify'], {
    env: { ...process.env, ...machine, MODELER_STATE_DIR: state },
  });
  if (refused.status === 0)
    fail('modeler verify accepted the relay lease with a key set without the vendor key');
  console.log(`with another key set: refused (exit ${refused.status})`);

  step("Python: the SDK checks out from the relay and verifies with the vendor's key set");
  const python = `
import json, sys, keyward
relay, app_key, app_secret, lock, jwks_file = sys.argv[1:6]
with keyward.Session(relay, app_key, app_secret) as session:
    lease = session.check_out("sdk-relay-python-machine", asset_num=lock, crm_product_id="${PRODUCT}", offline_days=1)
    claims = keyward.verify_lease(lease.offline_lease, json.load(open(jwks_file)), "sdk-relay-python-machine", audience=app_key)
    print("python verified:", claims.product.crm_product_id, "on", claims.asset_num)
    try:
        session.check_out("sdk-relay-third-machine", asset_num=lock, crm_product_id="${PRODUCT}")
        sys.exit("a third machine was given a seat of a two-seat grant")
    except keyward.KeywardError as refused:
        print("third machine refused:", refused.code)
        if refused.code != "90005":
            sys.exit(1)
`;
  const said = run(
    '/usr/bin/python3',
    ['-c', python, relay, app.appKey, app.appSecret, lock, vendorJwksFile],
    { PYTHONPATH: path.join(ROOT, 'sdks/python/src') },
    'the Python program',
  );
  console.log(said.trim());
  step('every SDK step against the relay passed');
}

main()
  .then(() => 0)
  .catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    return 1;
  })
  .then((code) => {
    for (const child of children) child.kill('SIGTERM');
    fs.rmSync(scratch, { recursive: true, force: true });
    process.exit(code);
  });
