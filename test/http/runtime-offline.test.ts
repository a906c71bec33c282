import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLease, type JSONWebKeySet } from '../../packages/client/src/index.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  heartbeat,
  leaseOf,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
  lockWith,
} from './runtime-helpers.js';

// Offline leases through the runtime itself: bounded by the app's setting, the license's end and
// its usage time left, signed with the published key, holding their seat until they expire (checked
// in or not, unless the app allows early return), still valid after a key rotation.

let h: Harness;
let world: RuntimeWorld;
const DAY_MS = 86_400_000;
/** How far the runtime's clock is ahead of the real one: moved to let held seats expire. */
let skew = 0;

const admin = (method: 'GET' | 'POST', url: string, payload?: object) =>
  h.app.inject({
    method,
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload }),
  });

async function jwks(): Promise<JSONWebKeySet> {
  const answer = await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
  expect(answer.statusCode).toBe(200);
  return answer.json() as JSONWebKeySet;
}

let scratch: string;

beforeAll(async () => {
  // The signing keys live in DATA_DIR.
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-offline-'));
  h = await startHarness({ DATA_DIR: scratch }, { now: () => Date.now() + skew });
  world = await runtimeWorld(h);
  await allowOffline(world);
});

async function allowOffline(w: RuntimeWorld): Promise<void> {
  const set = await admin('POST', `/apps/${w.app.appKey}/offline-lease-days`, { days: 30 });
  expect(set.statusCode, set.body).toBe(200);
}

interface CheckInAnswer {
  usedSeconds: number;
  seatFreeAt: number;
}

const checkedIn = async (w: RuntimeWorld, lease: { leaseId: string }, fp: string) =>
  leaseOf(await checkIn(w, lease, fp)) as unknown as CheckInAnswer;

async function claimsOf(lease: { offlineLease: string | null }, fp: string) {
  return verifyLease(lease.offlineLease as string, { jwks: await jwks(), fingerprint: fp });
}
afterAll(async () => {
  await h.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('offline leases', () => {
  it('are signed with a published key and say who may run what, where and until when', async () => {
    const target = await lockWith(world, { limitConcurrent: 4 });
    const fp = fingerprint();
    const before = Date.now();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 7 }));
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + 7 * DAY_MS);
    expect(lease.offlineLease).toEqual(expect.any(String));
    const claims = await verifyLease(lease.offlineLease as string, {
      jwks: await jwks(),
      fingerprint: fp,
      audience: world.app.appKey,
    });
    expect(claims).toMatchObject({
      iss: 'keyward',
      sub: lease.leaseId,
      aud: world.app.appKey,
      holder: { kind: 'lock', assetNum: target.assetNum },
      fingerprint: fp,
      assetNum: target.assetNum,
      product: { crmProductId: target.crmProductId },
      limits: { concurrent: 4 },
    });
    expect(claims.exp * 1000).toBe(Math.floor(lease.expiresAt / 1000) * 1000);
    await expect(
      verifyLease(lease.offlineLease as string, { jwks: await jwks(), fingerprint: fingerprint() }),
    ).rejects.toMatchObject({
      reason: 'fingerprint',
    });
  });

  it('hold their seat until checked in or expired', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    await h.app.services.runtime.endExpired();
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
  });

  it("are refused past the app's setting, which names the limit", async () => {
    const target = await lockWith(world);
    expect(
      refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint(), offlineDays: 31 }), '90011'),
    ).toBe('offline leases of 31 days are not allowed for this application (at most 30)');
  });

  it('signed before a key rotation still verify after it; new ones carry the new key', async () => {
    const target = await lockWith(world);
    const fp = fingerprint();
    const old = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 2 }));
    const rotated = await admin('POST', '/runtime/keys/rotate');
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { kid } = rotated.json() as { kid: string };
    const keys = await jwks();
    await expect(
      verifyLease(old.offlineLease as string, { jwks: keys, fingerprint: fp }),
    ).resolves.toMatchObject({
      sub: old.leaseId,
    });
    const fresh = leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint(), offlineDays: 2 }));
    const header = JSON.parse(
      Buffer.from((fresh.offlineLease as string).split('.')[0] as string, 'base64url').toString(),
    ) as {
      kid: string;
    };
    expect(header.kid).toBe(kid);
  });
});

describe('an offline lease checked in', () => {
  it('keeps its seat until its exp: four machines in turn on one seat get one valid lease, not four', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const first = fingerprint();
    const granted = leaseOf(await checkOut(world, { ...target, fingerprint: first, offlineDays: 30 }));
    const answer = await checkedIn(world, granted, first);
    expect(answer.seatFreeAt).toBe(granted.expiresAt);
    for (let machine = 2; machine <= 4; machine += 1) {
      expect(
        refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint(), offlineDays: 30 }), '90005'),
        `machine ${machine}`,
      ).toBe('all 1 seats of the product are in use (1 in use)');
      // Checking the first in again changes nothing and says the same.
      expect(await checkedIn(world, granted, first)).toEqual(answer);
    }
    // The first lease's signature is still good: it is the one valid lease there is.
    await expect(claimsOf(granted, first)).resolves.toMatchObject({ sub: granted.leaseId });
    const live = await admin('GET', `/runtime/leases?${new URLSearchParams({ assetNum: target.assetNum })}`);
    expect(
      (live.json() as Array<{ id: string; endReason: string | null }>).map((l) => [l.id, l.endReason]),
    ).toEqual([[granted.leaseId, 'checked_in']]);
    // Its heartbeats and consumption are over, like any checked-in lease's.
    refusalOf(await heartbeat(world, granted, first), '90008');
  });

  it('lets the same holder on the same machine check out again in the seat it holds', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const first = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    await checkedIn(world, first, fp);
    const again = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 2 }));
    expect(again).toMatchObject({ status: 'granted' });
    expect(again.leaseId).not.toBe(first.leaseId);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    // The new lease checked in leaves the seat held by the longer one.
    expect((await checkedIn(world, again, fp)).seatFreeAt).toBe(again.expiresAt);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
  });

  it('keeps its seat when an online lease was resumed offline before it was checked in', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const online = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    expect(online.offlineLease).toBeNull();
    const signed = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    expect(signed).toMatchObject({ leaseId: online.leaseId, status: 'resumed' });
    expect((await checkedIn(world, signed, fp)).seatFreeAt).toBe(signed.expiresAt);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
  });

  it('frees the seat at once for an online lease, whose seatFreeAt is now', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    const before = Date.now();
    const answer = await checkedIn(world, lease, fp);
    expect(answer.seatFreeAt).toBeGreaterThanOrEqual(before);
    expect(answer.seatFreeAt).toBeLessThanOrEqual(Date.now());
    leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
  });

  it('frees the seat at its exp', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 1 }));
    await checkedIn(world, lease, fp);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    skew = DAY_MS + 60_000;
    try {
      leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
    } finally {
      skew = 0;
    }
  });
});

describe('an app that allows offline leases to be returned early', () => {
  let returning: RuntimeWorld;
  beforeAll(async () => {
    returning = await runtimeWorld(h);
    await allowOffline(returning);
    const set = await admin('POST', `/apps/${returning.app.appKey}/settings`, { offlineEarlyReturn: true });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ offlineEarlyReturn: true });
  });

  it('frees the seat at check-in, trusting the software deleted its lease', async () => {
    const target = await lockWith(returning, { limitConcurrent: 1 });
    for (let machine = 1; machine <= 4; machine += 1) {
      const fp = fingerprint();
      const lease = leaseOf(await checkOut(returning, { ...target, fingerprint: fp, offlineDays: 30 }));
      expect(lease.status, `machine ${machine}`).toBe('granted');
      const before = Date.now();
      const answer = await checkedIn(returning, lease, fp);
      expect(answer.seatFreeAt).toBeGreaterThanOrEqual(before);
      expect(answer.seatFreeAt).toBeLessThan(lease.expiresAt);
    }
  });
});

describe("an offline lease's exp", () => {
  it('is the offline days asked for when the license allows them', async () => {
    const target = await lockWith(world, { limitEndDate: Date.now() + 60 * DAY_MS });
    const fp = fingerprint();
    const before = Date.now();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + 30 * DAY_MS);
    expect(await claimsOf(lease, fp)).toMatchObject({ expBound: 'offline-days' });
  });

  it("is at most the license's end: a license ending in 2 days gives no 30-day lease", async () => {
    const endDate = Date.now() + 2 * DAY_MS;
    const target = await lockWith(world, { limitEndDate: endDate, limitConcurrent: 1 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    expect(lease.expiresAt).toBe(endDate);
    const claims = await claimsOf(lease, fp);
    expect(claims).toMatchObject({ expBound: 'license-end', limits: { endDate } });
    expect(claims.exp * 1000).toBeLessThanOrEqual(endDate);
    // The server's row ends with it: checked in, the seat is free at the license's end.
    expect((await checkedIn(world, lease, fp)).seatFreeAt).toBe(endDate);
  });

  it('is at most what remains of the usage time', async () => {
    const target = await lockWith(world, { limitTimeDuration: 3600, limitConcurrent: 2 });
    const fp = fingerprint();
    const before = Date.now();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    expect(lease.expiresAt).toBeGreaterThanOrEqual(before + 3_600_000);
    expect(lease.expiresAt).toBeLessThanOrEqual(Date.now() + 3_600_000);
    expect(await claimsOf(lease, fp)).toMatchObject({ expBound: 'time-duration' });
  });

  it('is bounded again when a live lease is resumed offline', async () => {
    const endDate = Date.now() + 2 * DAY_MS;
    const target = await lockWith(world, { limitEndDate: endDate });
    const fp = fingerprint();
    leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    const resumed = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    expect(resumed).toMatchObject({ status: 'resumed', expiresAt: endDate });
    expect(await claimsOf(resumed, fp)).toMatchObject({ expBound: 'license-end' });
  });
});

describe('consumption against limitAmount', () => {
  it('draws down atomically and refuses past the limit with the limit and the use', async () => {
    const target = await lockWith(world, { limitAmount: 10, limitConcurrent: 5 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp }));
    const consume = (amount: number) =>
      world.runtime(`/leases/${lease.leaseId}/consume`, { fingerprint: fp, amount });
    expect(leaseOf(await consume(4))).toEqual({ consumed: 4, limit: 10, remaining: 6 });
    expect(refusalOf(await consume(7), '90007')).toBe(
      'the product has consumed its amount of 10 (4 consumed, 7 asked)',
    );
    const racing = await Promise.all(Array.from({ length: 10 }, () => consume(1)));
    const codes = racing.map((r) => (r.json() as { code: number | string }).code);
    expect(codes.filter((c) => c === 0)).toHaveLength(6);
    expect(codes.filter((c) => c === '90007')).toHaveLength(4);
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90007');
    refusalOf(
      await world.runtime(`/leases/${lease.leaseId}/consume`, { fingerprint: fp, amount: 0 }),
      '90000',
    );
  });
});
