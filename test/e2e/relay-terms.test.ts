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
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';

// A grant exchanged by typed code alone, as over a telephone, on the vendor's terms: the relay
// writes its request's code, the vendor answers it with a grant listing three machines and an
// overage of one seat, and the relay imports the grant's code. At the relay, a machine off the
// list is refused (90014), a second machine on a one-seat grant takes the overage seat, whose
// lease still verifies against the vendor's keys alone, and a third is refused (90005). The report
// says the overage; the vendor shows it; the return comes back as a code too.

const RELAY_MACHINE = 'relay-terms-test-machine-01';
const LISTED = ['lab-workstation-01', 'lab-workstation-02', 'lab-workstation-03'];

let h: Harness;
let world: RuntimeWorld;
let scratch: string;
let dir: string;
let vendorJwks: JSONWebKeySet;
let lock: { assetNum: string; crmProductId: string };
let relay: ServerProcess | undefined;
let machines: KeywardClient;
let appKey: string;
let relayId: string;
let grantId: string;

const relayEnv = { KEYWARD_RELAY_FINGERPRINT: RELAY_MACHINE };
/** The CLI beside the running relay, its admin key read from the relay's directory. */
const atRelay = () => ({ ...relayEnv, KEYWARD_URL: relay?.url ?? '', KEYWARD_ADMIN_KEY: '', DATA_DIR: '' });

function vendorPost(url: string, payload: Record<string, unknown>) {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload,
  });
}

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  lock = await lockWith(world, { limitConcurrent: 3 });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-terms-'));
  dir = path.join(scratch, 'relay');
  const vendorKeys = await vendorJwksFile(h, scratch);
  vendorJwks = vendorKeys.jwks;
  const jwksFile = vendorKeys.file;

  const init = await runCli(
    ['relay', 'init', '--dir', dir, '--vendor-jwks', jwksFile, '--ask', `${lock.assetNum}=1`, '--json'],
    relayEnv,
  );
  expect(init.code, init.stderr).toBe(0);
  const made = JSON.parse(init.stdout) as { relayId: string; requestCode: string | null };
  relayId = made.relayId;
  expect(made.requestCode).toMatch(/^[0-9A-Z]{6}(-[0-9A-Z]{1,6})+$/);

  // The vendor is read the request's code, and reads back the grant's.
  const granted = await vendorPost('/admin/relays/grants', {
    request: made.requestCode ?? '',
    machines: LISTED,
    overage: 1,
  });
  expect(granted.statusCode, granted.body).toBe(200);
  const answer = granted.json() as { grantId: string; relayId: string; code: string | null };
  expect(answer.relayId).toBe(relayId);
  expect(answer.code).not.toBeNull();
  grantId = answer.grantId;
  // Typed as a person would: lower case, spaces for dashes.
  const typed = (answer.code ?? '').toLowerCase().replaceAll('-', ' ');
  const imported = await runCli(['relay', 'import', typed, '--dir', dir], relayEnv);
  expect(imported.code, imported.stderr).toBe(0);
  expect(imported.stdout).toContain(`imported grant ${grantId}`);

  // Run from the relay's own folder, as its operator would: nothing may depend on the working
  // directory being Keyward's (the pages' JSX once was compiled by the tsconfig found there).
  relay = await startServerProcess(
    { ...relayEnv, KEYWARD_ADMIN_KEY: '' },
    undefined,
    ['relay', 'serve', '--dir', dir, '--port', '0'],
    scratch,
  );
  const app = await relayMachinesApp(relay.url, dir);
  appKey = app.appKey;
  machines = createKeywardClient({
    baseUrl: relay.url,
    appKey: app.appKey,
    appSecret: app.appSecret,
    scope: 'auth_runtime',
  });
}, 180_000);

afterAll(async () => {
  await relay?.stop();
  await h.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

function checkOutAtRelay(machine: string) {
  return machines.POST('/runtime/v1/leases', {
    body: { assetNum: lock.assetNum, crmProductId: lock.crmProductId, fingerprint: machine },
  });
}

async function refusalAtRelay(machine: string): Promise<string> {
  const refused = await checkOutAtRelay(machine).then(
    () => 'granted',
    (error: unknown) => (error instanceof KeywardApiError ? error.code : String(error)),
  );
  return refused;
}

describe('a relay on the vendor’s terms, its grant exchanged by typed code', () => {
  it('refuses a machine off its list and gives the overage seat, reported, within the grant’s word', async () => {
    expect(await refusalAtRelay('visitor-laptop-99')).toBe('90014');
    const first = await checkOutAtRelay(LISTED[0] as string);
    expect(first.status).toBe('granted');
    // The overage seat: a second machine on a one-seat grant.
    const second = await checkOutAtRelay(LISTED[1] as string);
    expect(second.status).toBe('granted');
    // Its lease names the granted seats, so the vendor's keys alone verify it as within the grant.
    expect(second.limits.concurrent).toBe(1);
    expect(await refusalAtRelay(LISTED[2] as string)).toBe('90005');

    const offline = await machines.POST('/runtime/v1/leases', {
      body: {
        assetNum: lock.assetNum,
        crmProductId: lock.crmProductId,
        fingerprint: LISTED[0] as string,
        offlineDays: 1,
      },
    });
    const token = offline.offlineLease ?? '';
    expect(token).not.toBe('');
    const claims = await verifyLease(token, {
      jwks: vendorJwks,
      fingerprint: LISTED[0] as string,
      audience: appKey,
    });
    expect(claims.assetNum).toBe(lock.assetNum);

    // The relay's own page, from a relay run outside Keyward's folder, in both languages.
    const page = await fetch(`${relay?.url ?? ''}/relay`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(lock.assetNum);
    expect(html).toContain('Machines that may check out: the 3 the grant lists.');
    expect(html).toContain('up to 1 more per product, reported to the vendor');
    const zh = await fetch(`${relay?.url ?? ''}/relay`, { headers: { 'accept-language': 'zh-CN' } });
    expect(zh.status).toBe(200);
    expect(zh.headers.get('content-security-policy')).toContain("style-src 'self'");
    expect(await zh.text()).toContain('授权列出的 3 台');

    // The overage is not the vendor's seats: the lock's other two are free online, no more.
    const online = [fingerprint(), fingerprint()];
    const leases = [];
    for (const machine of online)
      leases.push(leaseOf(await checkOut(world, { ...lock, fingerprint: machine })));
    refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
    for (const [i, lease] of leases.entries()) leaseOf(await checkIn(world, lease, online[i] as string));
  }, 60_000);

  it('reports the overage and the refusals; the vendor shows them with the grant’s terms', async () => {
    const reportFile = path.join(scratch, 'report.jwt');
    const written = await runCli(['relay', 'report', '--dir', dir, '--out', reportFile], atRelay());
    expect(written.code, written.stderr).toBe(0);
    const report = fs.readFileSync(reportFile, 'utf8').trim();
    const hours = (
      JSON.parse(Buffer.from(report.split('.')[1] ?? '', 'base64url').toString('utf8')) as {
        hours: Array<{ overage: number; refusals: Record<string, number> }>;
      }
    ).hours;
    expect(Math.max(...hours.map((hr) => hr.overage))).toBe(1);
    const refusals = hours.reduce<Record<string, number>>((all, hr) => {
      for (const [code, n] of Object.entries(hr.refusals)) all[code] = (all[code] ?? 0) + n;
      return all;
    }, {});
    expect(refusals).toMatchObject({ '90014': 1, '90005': 1 });

    const imported = await vendorPost('/admin/relays/reports', { report });
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ relayId, overagePeak: 1, peakSeats: 2 });
    const listed = await h.app.inject({
      method: 'GET',
      url: '/admin/relays/grants',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const grant = (listed.json() as { grants: Array<Record<string, unknown>> }).grants.find(
      (g) => g.grantId === grantId,
    );
    expect(grant).toMatchObject({ machines: 3, overage: 1, lastReport: { overagePeak: 1, peakSeats: 2 } });
  }, 60_000);

  it('gives its grant back by typed code; a mistyped code changes nothing', async () => {
    const given = await runCli(
      ['relay', 'return', '--dir', dir, '--out', path.join(scratch, 'return.jwt'), '--json'],
      atRelay(),
    );
    expect(given.code, given.stderr).toBe(0);
    const { returnCode } = JSON.parse(given.stdout) as { returnCode: string | null };
    expect(returnCode).not.toBeNull();
    const groups = (returnCode ?? '').split('-');
    const second = groups[1] ?? '';
    groups[1] = `${second[0] === '0' ? '1' : '0'}${second.slice(1)}`;
    const mistyped = await vendorPost('/admin/relays/returns', { return: groups.join('-') });
    expect(mistyped.statusCode).toBe(400);
    expect(mistyped.json()).toMatchObject({
      error: expect.stringMatching(/^return: as a typed code, group 2 does not check/) as unknown,
    });
    const returned = await vendorPost('/admin/relays/returns', { return: returnCode ?? '' });
    expect(returned.statusCode, returned.body).toBe(200);
    expect(returned.json()).toMatchObject({ grantId, made: true });
    const again = await vendorPost('/admin/relays/returns', { return: returnCode ?? '' });
    expect(again.json()).toMatchObject({ grantId, made: false });
    // Returned: all three of the lock's seats are free online.
    for (let i = 0; i < 3; i += 1) leaseOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }));
  }, 60_000);
});
