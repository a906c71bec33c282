import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeywardClient,
  KeywardApiError,
  verifyLease,
  type JSONWebKeySet,
  type KeywardClient,
} from '../../src/keyward-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { relayMachinesApp, vendorJwksFile } from '../support/relay-world.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';

// A grant of licenses with usage limits (docs/relay.md, "Usage limits"): the relay asks for a
// share of a metered license's amount and of a timed license's time; the vendor holds the shares
// (online use sees them as spent), the relay counts its own use against them and refuses past
// them with the server's codes, reports what it used, and its return gives the rest back.

const RELAY_MACHINE = 'relay-shares-test-machine-01';

let h: Harness;
let world: RuntimeWorld;
let scratch: string;
let dir: string;
let vendorJwks: JSONWebKeySet;
let metered: { assetNum: string; crmProductId: string };
let timed: { assetNum: string; crmProductId: string };
let relay: ServerProcess | undefined;
let machines: KeywardClient;
let appKey: string;
let appSecret: string;
let grantId: string;

const relayEnv = { KEYWARD_RELAY_FINGERPRINT: RELAY_MACHINE };
const atRelay = () => ({ ...relayEnv, KEYWARD_URL: relay?.url ?? '', KEYWARD_ADMIN_KEY: '', DATA_DIR: '' });

function vendor(method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>) {
  return h.app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload }),
  });
}

/**
 * Consumes `amount` online, at the vendor, on a fresh machine's lease: 'ok', or the code of the
 * refusal (a license whose amount is all consumed refuses the check-out itself).
 */
async function consumeOnline(amount: number): Promise<string> {
  const fp = fingerprint();
  const out = await checkOut(world, { ...metered, fingerprint: fp });
  if ((out.json() as { code: number | string }).code !== 0)
    return String((out.json() as { code: string }).code);
  const lease = leaseOf(out);
  const reply = await world.runtime(`/leases/${lease.leaseId}/consume`, { fingerprint: fp, amount });
  await world.runtime(`/leases/${lease.leaseId}/check-in`, { fingerprint: fp });
  const body = reply.json() as { code: number | string };
  return body.code === 0 ? 'ok' : String(body.code);
}

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  metered = await lockWith(world, { limitConcurrent: 4, limitAmount: 100 });
  timed = await lockWith(world, { limitConcurrent: 2, limitTimeDuration: 7200 });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-shares-'));
  dir = path.join(scratch, 'relay');
  const vendorKeys = await vendorJwksFile(h, scratch);
  vendorJwks = vendorKeys.jwks;
  const jwksFile = vendorKeys.file;

  const init = await runCli(
    [
      'relay',
      'init',
      '--dir',
      dir,
      '--vendor-jwks',
      jwksFile,
      '--ask',
      `${metered.assetNum}=2,amount=30`,
      '--ask',
      `${timed.assetNum}/${timed.crmProductId}=1,time=1h`,
      '--json',
    ],
    relayEnv,
  );
  expect(init.code, init.stderr).toBe(0);
  const made = JSON.parse(init.stdout) as {
    requestFile: string;
    requestCode: string | null;
    asks: { licenses: unknown[] };
  };
  expect(made.asks.licenses).toEqual([
    { assetNum: metered.assetNum, crmProductId: null, seats: 2, amount: 30 },
    { ...timed, seats: 1, timeSeconds: 3600 },
  ]);
  expect(made.requestCode).not.toBeNull();

  const granted = await vendor('POST', '/admin/relays/grants', { request: made.requestCode ?? '' });
  expect(granted.statusCode, granted.body).toBe(200);
  const answer = granted.json() as { grantId: string; code: string | null };
  grantId = answer.grantId;
  const imported = await runCli(['relay', 'import', answer.code ?? '', '--dir', dir], relayEnv);
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toContain('30 of its amount');
  expect(imported.stdout).toContain('3600 s of its time');

  relay = await serveRelay();
  ({ appKey, appSecret } = await relayMachinesApp(relay.url, dir));
  machines = machinesAt(relay.url);
}, 180_000);

function machinesAt(baseUrl: string): KeywardClient {
  return createKeywardClient({ baseUrl, appKey, appSecret, scope: 'auth_runtime' });
}

/** The relay started, or started again, on its directory: from the outside, as its operator would. */
function serveRelay(): Promise<ServerProcess> {
  return startServerProcess({ ...relayEnv, KEYWARD_ADMIN_KEY: '' }, undefined, [
    'relay',
    'serve',
    '--dir',
    dir,
    '--port',
    '0',
  ]);
}

afterAll(async () => {
  await relay?.stop();
  await h.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

async function codeOf(call: Promise<unknown>): Promise<string> {
  return call.then(
    () => 'ok',
    (error: unknown) => (error instanceof KeywardApiError ? error.code : String(error)),
  );
}

/**
 * Imports a return of `grantId` at the vendor, which gives back 10 of the metered license's amount
 * and `seconds` of the timed one's time: the 10 are then the license's online, and no more.
 */
async function returnedGivingBack(text: string, seconds: number): Promise<void> {
  const returned = await vendor('POST', '/admin/relays/returns', { return: text });
  expect(returned.statusCode, returned.body).toBe(200);
  expect(returned.json()).toMatchObject({
    grantId,
    made: true,
    givenBack: [
      { ...metered, timeSeconds: null, amount: 10 },
      { ...timed, timeSeconds: seconds, amount: null },
    ],
  });
  expect(await consumeOnline(11)).toBe('90007');
  expect(await consumeOnline(10)).toBe('ok');
}

describe('a relay granted shares of usage limits', () => {
  it('holds the shares at the vendor, and counts its own use against them with the server’s codes', async () => {
    // Online, the 30 held for the relay are spent: 70 of the 100 are left; 60 are drawn.
    expect(await consumeOnline(71)).toBe('90007');
    expect(await consumeOnline(60)).toBe('ok');
    expect(await consumeOnline(11)).toBe('90007');

    const machine = 'lab-workstation-01';
    const lease = await machines.POST('/runtime/v1/leases', {
      body: { assetNum: metered.assetNum, crmProductId: metered.crmProductId, fingerprint: machine },
    });
    expect(lease.limits.amount).toBe(30);
    const draw = (amount: number) =>
      machines.POST('/runtime/v1/leases/{leaseId}/consume', {
        params: { path: { leaseId: lease.leaseId } },
        body: { fingerprint: machine, amount },
      });
    expect(await draw(20)).toMatchObject({ consumed: 20, limit: 30, remaining: 10 });
    expect(await codeOf(draw(11))).toBe('90007');

    // The timed license: a lease naming the share as its time limit, bounded by it offline, and
    // verified with the vendor's keys alone.
    const offline = await machines.POST('/runtime/v1/leases', {
      body: { ...timed, fingerprint: machine, offlineDays: 7 },
    });
    expect(offline.limits.timeDurationSeconds).toBe(3600);
    const claims = await verifyLease(offline.offlineLease ?? '', {
      jwks: vendorJwks,
      fingerprint: machine,
      audience: appKey,
    });
    expect(claims.exp - claims.iat).toBeLessThanOrEqual(3600);

    // The relay's own page says how much of each share is used, for the network's operator.
    const page = await fetch(`${relay?.url ?? ''}/relay`);
    const html = await page.text();
    expect(html).toContain('Usage limits: used / granted');
    expect(html).toContain('amount 20 / 30');
    expect(html).toMatch(/time (&lt;0\.1|<0\.1|0) \/ 1 h/);
  }, 60_000);

  it('reports what it used of each share; the vendor shows it beside the share', async () => {
    const reportFile = path.join(scratch, 'report.jwt');
    const written = await runCli(['relay', 'report', '--dir', dir, '--out', reportFile], atRelay());
    expect(written.code, written.stderr).toBe(0);
    const report = fs.readFileSync(reportFile, 'utf8').trim();
    const imported = await vendor('POST', '/admin/relays/reports', { report });
    expect(imported.statusCode, imported.body).toBe(200);
    expect((imported.json() as { used: unknown[] }).used).toEqual([
      { ...metered, amount: 20 },
      { ...timed, timeSeconds: expect.any(Number) as unknown },
    ]);
    const listed = await vendor('GET', '/admin/relays/grants');
    const grant = (listed.json() as { grants: Array<{ grantId: string; shares: unknown[] }> }).grants.find(
      (g) => g.grantId === grantId,
    );
    expect(grant?.shares).toEqual([
      { ...metered, timeSeconds: null, amount: 30, used: { timeSeconds: null, amount: 20 } },
      { ...timed, timeSeconds: 3600, amount: null, used: { timeSeconds: expect.any(Number), amount: null } },
    ]);
  }, 60_000);

  it('returns the grant it renews once it serves the renewal, giving back what it did not use', async () => {
    const init = await runCli(
      [
        'relay',
        'init',
        '--dir',
        dir,
        '--ask',
        `${metered.assetNum}/${metered.crmProductId}=2,amount=10`,
        '--ask',
        `${timed.assetNum}/${timed.crmProductId}=1,time=10m`,
        '--json',
      ],
      relayEnv,
    );
    expect(init.code, init.stderr).toBe(0);
    const { requestCode } = JSON.parse(init.stdout) as { requestCode: string | null };
    const renewal = await vendor('POST', '/admin/relays/grants', { request: requestCode ?? '' });
    expect(renewal.statusCode, renewal.body).toBe(200);
    const renewed = renewal.json() as { grantId: string; code: string | null };
    const imported = await runCli(['relay', 'import', renewed.code ?? '', '--dir', dir], relayEnv);
    expect(imported.code, imported.stderr).toBe(0);
    await relay?.stop();
    relay = await serveRelay();
    machines = machinesAt(relay.url);

    // Serving the renewal, the relay returned the grant it replaced, with its use: 20 of the 30,
    // and the whole hour of time (the offline lease may run to its expiry, the hour's end).
    const file = path.join(dir, `return-${grantId}.jwt`);
    expect(relay.output()).toContain(file);
    const superseded = fs.readFileSync(file, 'utf8').trim();
    const { used } = JSON.parse(Buffer.from(superseded.split('.')[1] ?? '', 'base64url').toString()) as {
      used: unknown[];
    };
    expect(used).toEqual([
      { ...metered, amount: 20 },
      { ...timed, timeSeconds: 3600 },
    ]);
    // The renewal's 10 were held from the 10 left; the old grant's unused 10 are back online.
    await returnedGivingBack(superseded, 0);
    // The renewal holds its own seat of the timed license: one machine online, the second refused.
    const online = fingerprint();
    const held = leaseOf(await checkOut(world, { ...timed, fingerprint: online }));
    expect((await checkOut(world, { ...timed, fingerprint: fingerprint() })).json()).toMatchObject({
      code: '90005',
    });
    leaseOf(await checkIn(world, held, online));

    // The renewal counts its shares from nothing.
    const machine = 'lab-workstation-02';
    const lease = await machines.POST('/runtime/v1/leases', {
      body: { ...metered, fingerprint: machine },
    });
    expect(lease.limits.amount).toBe(10);
    grantId = renewed.grantId;
  }, 120_000);

  it('gives back by its return what it did not use', async () => {
    const given = await runCli(
      ['relay', 'return', '--dir', dir, '--out', path.join(scratch, 'return.jwt'), '--json'],
      atRelay(),
    );
    expect(given.code, given.stderr).toBe(0);
    const { returnCode, used } = JSON.parse(given.stdout) as {
      returnCode: string | null;
      used: Array<{ timeSeconds?: number; amount?: number }>;
    };
    expect(used).toEqual([
      { ...metered, amount: 0 },
      { ...timed, timeSeconds: 0 },
    ]);
    await returnedGivingBack(returnCode ?? '', 600);
  }, 60_000);
});
