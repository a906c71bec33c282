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
  leaseOf,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
  lockWith,
} from './runtime-helpers.js';

// Offline leases through the runtime itself: bounded by the app's setting, signed with the
// published key, holding their seat until they expire or are checked in, still valid after a
// key rotation.

let h: Harness;
let world: RuntimeWorld;
const DAY_MS = 86_400_000;

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
  h = await startHarness({ DATA_DIR: scratch });
  world = await runtimeWorld(h);
  const set = await admin('POST', `/apps/${world.app.appKey}/offline-lease-days`, { days: 30 });
  expect(set.statusCode, set.body).toBe(200);
});
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

  it('hold their seat until checked in', async () => {
    const target = await lockWith(world, { limitConcurrent: 1 });
    const fp = fingerprint();
    const lease = leaseOf(await checkOut(world, { ...target, fingerprint: fp, offlineDays: 30 }));
    await h.app.services.runtime.endExpired();
    refusalOf(await checkOut(world, { ...target, fingerprint: fingerprint() }), '90005');
    leaseOf(await checkIn(world, lease, fp));
    leaseOf(await checkOut(world, { ...target, fingerprint: fingerprint() }));
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
