import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createKeywardClient,
  KeywardApiError,
  KeywardLeaseError,
  verifyLease,
  type JSONWebKeySet,
  type KeywardClient,
} from '../../src/keyward-client.js';
import { RELAY_CHANNEL } from '../../src/domain/relay/relay-licenses.service.js';
import { generateEd25519 } from '../../src/domain/runtime-keys/ed25519.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  checkOut,
  fingerprint,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';

// `keyward relay serve` as a closed network meets it: the vendor (in this process, on the suite's
// database) grants a relay 10 seats of a lock; the relay, a real process on its own embedded
// database, serves them with the same runtime API; its machines' offline leases verify against the
// vendor's keys alone; 200 machines starting at once get exactly 10 seats; a relay refuses to start
// on another machine, with its clock set back, or without a grant.

const SEATS = 10;
const RELAY_MACHINE = 'relay-serve-test-machine-01';

let h: Harness;
let world: RuntimeWorld;
let scratch: string;
let dir: string;
let vendorJwks: JSONWebKeySet;
let lock: { assetNum: string; crmProductId: string };
let relay: ServerProcess | undefined;
let machines: KeywardClient;
let appKey: string;
/** The relay's admin key, as it wrote it to its data directory at its first start. */
let relayAdminKey: string;

const relayEnv = { KEYWARD_RELAY_FINGERPRINT: RELAY_MACHINE };

async function relayAdmin(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${relay?.url ?? ''}/admin${url}`, {
    method,
    headers: { authorization: `Bearer ${relayAdminKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  expect(response.status, text).toBeLessThan(300);
  return JSON.parse(text) as unknown;
}

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  lock = await lockWith(world, { limitConcurrent: SEATS + 2 });
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-serve-'));
  dir = path.join(scratch, 'relay');
  await h.app.services.runtimeKeys.prepare();
  const jwks = await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  vendorJwks = jwks.json() as JSONWebKeySet;
  const jwksFile = path.join(scratch, 'vendor-jwks.json');
  fs.writeFileSync(jwksFile, jwks.body);

  const init = await runCli(
    [
      'relay',
      'init',
      '--dir',
      dir,
      '--vendor-jwks',
      jwksFile,
      '--ask',
      `${lock.assetNum}=${SEATS}`,
      '--days',
      '30',
    ],
    relayEnv,
  );
  expect(init.code, init.stderr).toBe(0);
  const granted = await h.app.inject({
    method: 'POST',
    url: '/admin/relays/grants',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { request: fs.readFileSync(path.join(dir, 'request.jwt'), 'utf8').trim() },
  });
  expect(granted.statusCode, granted.body).toBe(200);
  const grantFile = path.join(scratch, 'grant.jwt');
  fs.writeFileSync(grantFile, (granted.json() as { token: string }).token);
  const imported = await runCli(['relay', 'import', grantFile, '--dir', dir], relayEnv);
  expect(imported.code, imported.stderr).toBe(0);

  relay = await startServerProcess({ ...relayEnv, KEYWARD_ADMIN_KEY: '' }, undefined, [
    'relay',
    'serve',
    '--dir',
    dir,
    '--port',
    '0',
  ]);
  relayAdminKey = fs.readFileSync(path.join(dir, 'data', 'admin.key'), 'utf8').trim();
  const app = (await relayAdmin('POST', '/apps', {
    name: 'lab machines',
    scopes: ['auth_runtime'],
    channels: [RELAY_CHANNEL],
  })) as { appKey: string; appSecret: string };
  appKey = app.appKey;
  await relayAdmin('POST', `/apps/${encodeURIComponent(app.appKey)}/offline-lease-days`, { days: 7 });
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

function checkOutAtRelay(machine: string, offlineDays = 0) {
  return machines.POST('/runtime/v1/leases', {
    body: {
      assetNum: lock.assetNum,
      crmProductId: lock.crmProductId,
      fingerprint: machine,
      ...(offlineDays > 0 ? { offlineDays } : {}),
    },
  });
}

describe('keyward relay serve', () => {
  it("serves the grant's seats; an offline lease verifies against the vendor's keys alone", async () => {
    const machine = fingerprint();
    const lease = await checkOutAtRelay(machine, 3);
    expect(lease.status).toBe('granted');
    expect(lease.limits.concurrent).toBe(SEATS);
    const token = lease.offlineLease ?? '';
    const claims = await verifyLease(token, { jwks: vendorJwks, fingerprint: machine, audience: appKey });
    expect(claims.assetNum).toBe(lock.assetNum);
    expect(claims.product.crmProductId).toBe(lock.crmProductId);
    // The relay's JWKS route publishes the vendor's keys, so a machine pointed at it verifies alike.
    const published = (await (
      await fetch(`${relay?.url ?? ''}/.well-known/jwks.json`)
    ).json()) as JSONWebKeySet;
    expect(published.keys.map((k) => k.kid).sort()).toEqual(vendorJwks.keys.map((k) => k.kid).sort());
    // Past the grant's end the same lease is refused as its grant's.
    const afterGrant = new Date(Date.now() + 31 * 86_400_000);
    await expect(
      verifyLease(token, { jwks: vendorJwks, fingerprint: machine, audience: appKey, now: afterGrant }),
    ).rejects.toMatchObject({ reason: expect.stringMatching(/grant-expired|expired/) as unknown });
    // Another vendor's keys do not verify it.
    const other = await generateEd25519();
    const stranger = {
      keys: [{ kty: 'OKP', crv: 'Ed25519', x: other.x, kid: vendorJwks.keys[0]?.kid ?? '' }],
    };
    await expect(
      verifyLease(token, { jwks: stranger, fingerprint: machine, audience: appKey }),
    ).rejects.toBeInstanceOf(KeywardLeaseError);
    // Offline activation is the vendor's to answer: its typed code names the vendor's key only.
    const activation = await fetch(`${relay?.url ?? ''}/admin/runtime/activations`, {
      method: 'POST',
      headers: { authorization: `Bearer ${relayAdminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ request: 'KWR1-AAAAA-AAAAA' }),
    });
    expect(activation.status).toBe(400);
    expect(((await activation.json()) as { error: string }).error).toMatch(
      /^request: a relay does not answer/,
    );
    await machines.POST('/runtime/v1/leases/{leaseId}/check-in', {
      params: { path: { leaseId: lease.leaseId } },
      body: { fingerprint: machine },
    });
  }, 60_000);

  it('gives exactly its 10 seats to 200 machines starting at once, and shows them on /relay', async () => {
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, () => checkOutAtRelay(fingerprint())),
    );
    const granted = results.filter((r) => r.status === 'fulfilled');
    const refusals = results.flatMap((r) =>
      r.status === 'rejected' && r.reason instanceof KeywardApiError ? [r.reason.code] : [],
    );
    const held = SEATS - 1; // the first test's offline lease keeps its seat until it expires
    expect(granted.length).toBe(held);
    expect(refusals.length).toBe(200 - held);
    expect(new Set(refusals)).toEqual(new Set(['90005']));

    const status = (await (await fetch(`${relay?.url ?? ''}/relay/status`)).json()) as {
      licenses: Array<{ assetNum: string; granted: number; inUse: number }>;
      seatsInUse: number;
    };
    expect(status.licenses).toEqual([
      expect.objectContaining({ assetNum: lock.assetNum, granted: SEATS, inUse: SEATS }),
    ]);
    const page = await fetch(`${relay?.url ?? ''}/relay`);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(lock.assetNum);
    expect(html).toContain(`Machines with a seat: ${SEATS}`);
  }, 120_000);

  it('leaves the vendor holding the granted seats: only the rest are online', async () => {
    const online = [
      await checkOut(world, { ...lock, fingerprint: fingerprint() }),
      await checkOut(world, { ...lock, fingerprint: fingerprint() }),
    ];
    for (const reply of online) expect(reply.statusCode, reply.body).toBe(200);
    refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
  }, 60_000);

  it('reports its usage; the vendor imports it once and counts it in its usage, marked via the relay', async () => {
    const relayId = JSON.parse(fs.readFileSync(path.join(dir, 'relay.json'), 'utf8')).relayId as string;
    const reportFile = path.join(scratch, 'report.jwt');
    // Run beside the relay as its operator would: the relay's admin key read from its directory.
    const written = await runCli(['relay', 'report', '--dir', dir, '--out', reportFile], {
      KEYWARD_URL: relay?.url ?? '',
      KEYWARD_ADMIN_KEY: '',
      DATA_DIR: '',
    });
    expect(written.code, written.stderr).toBe(0);
    expect(written.stdout).toMatch(/^report [0-9a-f-]{36}: [1-9]\d* hour\(s\) of usage/);
    const report = fs.readFileSync(reportFile, 'utf8').trim();

    const importReport = (text: string) =>
      h.app.inject({
        method: 'POST',
        url: '/admin/relays/reports',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { report: text },
      });
    // Changed on the way: one hour's seats raised, the signature no longer verifies.
    const [head, body, signature] = report.split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
      hours: Array<{ peakSeats: number }>;
    };
    const first = claims.hours[0];
    if (first !== undefined) first.peakSeats += 5;
    const forged = `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`;
    const tampered = await importReport(forged);
    expect(tampered.statusCode).toBe(400);
    expect(tampered.json()).toMatchObject({
      error: expect.stringMatching(/^report: has a signature that does not verify/) as unknown,
    });

    const imported = await importReport(report);
    expect(imported.statusCode, imported.body).toBe(200);
    const answer = imported.json() as {
      relayId: string;
      peakSeats: number;
      seatHours: number;
      refused: number;
    };
    expect(answer.relayId).toBe(relayId);
    expect(answer.peakSeats).toBeGreaterThanOrEqual(SEATS);
    expect(answer.refused).toBeGreaterThanOrEqual(200 - SEATS + 1);
    const replayed = await importReport(report);
    expect(replayed.statusCode).toBe(409);
    expect(replayed.json()).toMatchObject({ error: expect.stringMatching(/imported already/) as unknown });

    const usage = await h.app.inject({
      method: 'GET',
      url: `/admin/usage?app=${relayId}&product=${encodeURIComponent(lock.crmProductId)}&bucket=hour`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(usage.statusCode, usage.body).toBe(200);
    const seen = usage.json() as {
      series: Array<{ peakSeats: number; licensedSeats: number | null; denied: number }>;
      viaRelay: Array<{ relayId: string; peakSeats: number }>;
    };
    expect(Math.max(...seen.series.map((p) => p.peakSeats))).toBeGreaterThanOrEqual(SEATS);
    expect(seen.series.some((p) => p.licensedSeats === SEATS)).toBe(true);
    expect(seen.series.reduce((n, p) => n + p.denied, 0)).toBe(answer.refused);
    expect(seen.viaRelay).toEqual([expect.objectContaining({ relayId, peakSeats: answer.peakSeats })]);

    const listed = await h.app.inject({
      method: 'GET',
      url: '/admin/relays/grants',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    const { grants } = listed.json() as {
      grants: Array<{ relayId: string; state: string; lastReport: { reportId: string } | null }>;
    };
    const reportId = (JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { jti: string }).jti;
    expect(grants.find((g) => g.relayId === relayId)).toMatchObject({
      state: 'running',
      lastReport: { reportId },
    });
  }, 60_000);

  it('refuses to start on another machine, with its clock set back, or without a grant', async () => {
    const elsewhere = await runCli(['relay', 'serve', '--dir', dir, '--port', '0'], {
      KEYWARD_RELAY_FINGERPRINT: 'some-other-machine',
    });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/belongs to a relay made on another machine/);

    const copy = path.join(scratch, 'copy');
    fs.cpSync(dir, copy, { recursive: true, filter: (src) => !src.includes(`${path.sep}data`) });
    fs.writeFileSync(path.join(copy, 'clock.json'), JSON.stringify({ lastSeen: Date.now() + 3_600_000 }));
    const behind = await runCli(['relay', 'serve', '--dir', copy, '--port', '0'], relayEnv);
    expect(behind.code).toBe(1);
    expect(behind.stderr).toMatch(/clock reads .* before/);
    const audit = fs.readFileSync(path.join(copy, 'audit.jsonl'), 'utf8');
    expect(audit).toContain('"event":"clock.behind"');

    fs.rmSync(path.join(copy, 'grant.jwt'));
    fs.rmSync(path.join(copy, 'clock.json'));
    const ungranted = await runCli(['relay', 'serve', '--dir', copy, '--port', '0'], relayEnv);
    expect(ungranted.code).toBe(1);
    expect(ungranted.stderr).toMatch(/holds no grant/);
  }, 60_000);

  it('gives its grant back: it stops giving seats, the vendor frees them at once, and it will not serve that grant again', async () => {
    const returnFile = path.join(scratch, 'return.jwt');
    const given = await runCli(['relay', 'return', '--dir', dir, '--out', returnFile], {
      KEYWARD_URL: relay?.url ?? '',
      KEYWARD_ADMIN_KEY: '',
      DATA_DIR: '',
    });
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout).toMatch(/^returned grant [0-9a-f-]{36}: this relay gives none of its seats/);
    await expect(checkOutAtRelay(fingerprint())).rejects.toBeInstanceOf(KeywardApiError);

    const importReturn = (text: string) =>
      h.app.inject({
        method: 'POST',
        url: '/admin/relays/returns',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { return: text },
      });
    const token = fs.readFileSync(returnFile, 'utf8').trim();
    const [head, body] = token.split('.') as [string, string, string];
    const forged = await importReturn(`${head}.${body}.${'A'.repeat(86)}`);
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toMatchObject({
      error: expect.stringMatching(/^return: has a signature/) as unknown,
    });
    // Before the return is imported, the vendor still holds the relay's seats.
    refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
    const accepted = await importReturn(token);
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json()).toMatchObject({ made: true });
    for (let i = 0; i < SEATS; i += 1) {
      const reply = await checkOut(world, { ...lock, fingerprint: fingerprint() });
      expect(reply.statusCode, reply.body).toBe(200);
    }
    refusalOf(await checkOut(world, { ...lock, fingerprint: fingerprint() }), '90005');
    const again = await importReturn(token);
    expect(again.json()).toMatchObject({ made: false });

    const restarted = await runCli(['relay', 'serve', '--dir', dir, '--port', '0'], relayEnv);
    expect(restarted.code).toBe(1);
    expect(restarted.stderr).toMatch(/was returned to the vendor: import a new grant/);
  }, 60_000);
});
