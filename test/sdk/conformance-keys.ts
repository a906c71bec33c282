import { format } from 'prettier';
import type { JWK } from 'jose';
import type { JSONWebKeySet, LeaseFailure, OfflineLeaseClaims } from '@keyward/client';
import { KeywardLeaseError, LEASE_ISSUER, verifyLease } from '@keyward/client';
import { thumbprintOf } from '../../src/domain/runtime-keys/ed25519.js';

// What the SDK conformance vectors share (sdks/conformance/README.md): the suite's keys, its clock,
// the machine and application its leases are for, a lease's claims, and the cases' shape.

// Keys of this suite alone, never of a server: A signs, B is an older key still published (a
// rotation), C is no key of the set (another vendor's). R is a relay's key its pool grant
// certifies, S a relay key no grant names.
export const KEYS = {
  A: {
    kty: 'OKP',
    crv: 'Ed25519',
    x: '6SVDqvbVE-VLwIL4TKinRPng9SGZ-yhduJKFSNiXRBA',
    d: 'gzIAaph1fZAqhZAVZ93kZtCeZALUmhRem14QB6aaVgg',
  },
  B: {
    kty: 'OKP',
    crv: 'Ed25519',
    x: 'xOx8JLIxliLK99DH_9HhPCWQ5zaxEN-r1-muh6RjQfg',
    d: 'cN2pCL_wuTtZ8NT-M4bCA6_5mB0pd333JSKgv6_WYvE',
  },
  C: {
    kty: 'OKP',
    crv: 'Ed25519',
    x: 'vk31Dlu7FuYAwOYNrZV1CiL27cY_X8AoNoDcwRps14c',
    d: 'zInRLT1sgql4eKkaS6v4amU6845QjC4_4ifkkyi_oWg',
  },
  R: {
    kty: 'OKP',
    crv: 'Ed25519',
    x: 'ZNUe7_ndmkEWEM6nh1IasmpKtRCizjk7Fb9vE-h_Zlc',
    d: 'uDOcNGAtcCYJq61bRxTqamHxFwcfW2XzhFd6CPl0qJI',
  },
  S: {
    kty: 'OKP',
    crv: 'Ed25519',
    x: 'zbaTR730XJD8V9Ra5CxJ-LsormezHimFW7q5k-9zyzQ',
    d: '1Hq9GgmvGXYBN0CgB2L5QvA6IOaWEahhEu5aiqQ532I',
  },
} satisfies Record<string, JWK>;
export type KeyName = keyof typeof KEYS;

/** The moment every case is judged at (2027-01-15T08:00:00Z), in seconds as JWT times are. */
export const NOW = 1_800_000_000;
export const DAY = 86_400;
export const FINGERPRINT = 'fp-conformance-machine-0001';
export const AUDIENCE = 'kw_conformance_app';

export const baseClaims = (): OfflineLeaseClaims => ({
  iss: LEASE_ISSUER,
  sub: '01938f2e-7c1a-7000-8000-000000000001',
  jti: '01938f2e-7c1a-7000-8000-000000000001',
  aud: AUDIENCE,
  iat: NOW - 3600,
  nbf: NOW - 3600,
  exp: NOW + 7 * DAY,
  holder: { kind: 'lock', assetNum: 'A-CONFORMANCE-0001' },
  fingerprint: FINGERPRINT,
  assetNum: 'A-CONFORMANCE-0001',
  product: { crmProductId: 'P-CONFORMANCE', productUri: 'gms-2001', productName: 'Modeler' },
  limits: {
    concurrent: 1,
    timeDurationSeconds: null,
    amount: 100,
    startDate: (NOW - 30 * DAY) * 1000,
    endDate: (NOW + 60 * DAY) * 1000,
  },
  expBound: 'offline-days',
});

export async function kidOf(name: KeyName): Promise<string> {
  return thumbprintOf(KEYS[name] as Parameters<typeof thumbprintOf>[0]);
}

export type LeaseExpectation =
  | { valid: true; sub: string; assetNum: string; holderKind: string; expBound: string | null }
  | { valid: false; reason: LeaseFailure };

export interface LeaseCase {
  name: string;
  description: string;
  token: string;
  fingerprint: string;
  audience?: string;
  now: number;
  expect: LeaseExpectation;
}

export const valid = (claims: OfflineLeaseClaims): LeaseExpectation => ({
  valid: true,
  sub: claims.sub,
  assetNum: claims.assetNum,
  holderKind: claims.holder.kind,
  expBound: claims.expBound ?? null,
});

/** The vendor's published keys: A, and B retired by a rotation. */
export async function keySet(): Promise<JSONWebKeySet> {
  const published = async (name: 'A' | 'B') => {
    const { d: _private, ...pub } = KEYS[name];
    return { ...pub, kid: await kidOf(name), alg: 'EdDSA', use: 'sig' };
  };
  return { keys: [await published('A'), await published('B')] };
}

/** A vectors file as committed: JSON, formatted. */
export async function document(value: object): Promise<string> {
  return format(JSON.stringify(value), { parser: 'json' });
}

/** How the TypeScript client judges a case: as a case's `expect` says it. */
export async function judged(c: LeaseCase, jwks: JSONWebKeySet): Promise<LeaseExpectation> {
  return verifyLease(c.token, {
    jwks,
    fingerprint: c.fingerprint,
    now: new Date(c.now * 1000),
    ...(c.audience === undefined ? {} : { audience: c.audience }),
  }).then(
    (claims) => valid(claims),
    (error: unknown) => {
      if (error instanceof KeywardLeaseError) return { valid: false, reason: error.reason } as const;
      throw error;
    },
  );
}
