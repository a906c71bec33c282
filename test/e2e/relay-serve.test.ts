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
const RELAY_ADMIN_KEY = 'relay-admin-key-for-the-relay-test-0123456789';
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

const relayEnv = { KEYWARD_RELAY_FINGERPRINT: RELAY_MACHINE };

async function relayAdmin(method: string, url: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${relay?.url ?? ''}/admin${url}`, {
    method,
    headers: { authorization: `Bearer ${RELAY_ADMIN_KEY}`, 'content-type': 'application/json' },
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

  relay = await startServerProcess({ ...relayEnv, KEYWARD_ADMIN_KEY: RELAY_ADMIN_KEY }, undefined, [
    'relay',
    'serve',
    '--dir',
    dir,
    '--port',
    '0',
  ]);
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
});
