import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt, importJWK, SignJWT, type JWK } from 'jose';
import { format } from 'prettier';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KeywardLeaseError,
  LEASE_ISSUER,
  LEASE_TYP,
  verifyLease,
  verifyWebhook,
  type JSONWebKeySet,
  type LeaseFailure,
  type OfflineLeaseClaims,
} from '@keyward/client';
import { thumbprintOf } from '../../src/domain/runtime-keys/ed25519.js';
import { eventBody } from '../../src/domain/webhooks/delivery.service.js';
import { signatureHeader } from '../../src/domain/webhooks/secrets.js';
import { leaseOf, lockWith, runtimeWorld, fingerprint } from '../http/runtime-helpers.js';
import { startHarness, type Harness } from '../support/harness.js';

// The offline half of the SDK conformance suite: sdks/conformance/leases.json and webhooks.json,
// made here by the server's own signing code and checked against the TypeScript client. Every SDK
// runs every case (sdks/conformance/README.md); a case added here fails each SDK that does not
// handle it. The files are committed: this test fails when they differ from what it makes, and
// `KEYWARD_WRITE_VECTORS=1 npx vitest run test/sdk/conformance-vectors.test.ts` rewrites them.

const DIR = path.resolve(import.meta.dirname, '../../sdks/conformance');
const WRITE = process.env.KEYWARD_WRITE_VECTORS === '1';

// Keys of this suite alone, never of a server: A signs, B is an older key still published (a
// rotation), C is no key of the set.
const KEYS = {
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
} satisfies Record<string, JWK>;
type KeyName = keyof typeof KEYS;

/** The moment every case is judged at (2027-01-15T08:00:00Z), in seconds as JWT times are. */
const NOW = 1_800_000_000;
const DAY = 86_400;
const FINGERPRINT = 'fp-conformance-machine-0001';
const AUDIENCE = 'kw_conformance_app';

const baseClaims = (): OfflineLeaseClaims => ({
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

async function kidOf(name: KeyName): Promise<string> {
  return thumbprintOf(KEYS[name] as Parameters<typeof thumbprintOf>[0]);
}

/** Signed as RuntimeKeysService.sign signs: EdDSA, the key's thumbprint as kid, typ keyward-lease+jwt. */
async function sign(claims: object, name: KeyName = 'A', header: { typ?: string } = {}): Promise<string> {
  const key = await importJWK(KEYS[name], 'EdDSA');
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: await kidOf(name), typ: header.typ ?? LEASE_TYP })
    .sign(key);
}

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

type LeaseExpectation =
  | { valid: true; sub: string; assetNum: string; holderKind: string; expBound: string | null }
  | { valid: false; reason: LeaseFailure };

interface LeaseCase {
  name: string;
  description: string;
  token: string;
  fingerprint: string;
  audience?: string;
  now: number;
  expect: LeaseExpectation;
}

const valid = (claims: OfflineLeaseClaims): LeaseExpectation => ({
  valid: true,
  sub: claims.sub,
  assetNum: claims.assetNum,
  holderKind: claims.holder.kind,
  expBound: claims.expBound ?? null,
});

async function leaseCases(): Promise<LeaseCase[]> {
  const claims = baseClaims();
  const token = await sign(claims);
  const [header, payload] = token.split('.') as [string, string, string];
  const member: OfflineLeaseClaims = {
    ...claims,
    holder: {
      kind: 'member',
      memberGlobalId: '01938f2e-7c1a-7000-8000-0000000000aa',
      enterpriseGlobalId: '01938f2e-7c1a-7000-8000-0000000000bb',
    },
  };
  const ended: OfflineLeaseClaims = { ...claims, limits: { ...claims.limits, endDate: (NOW - DAY) * 1000 } };
  const cappedByLicense: OfflineLeaseClaims = {
    ...claims,
    exp: NOW + 2 * DAY,
    limits: { ...claims.limits, endDate: (NOW + 2 * DAY) * 1000 },
    expBound: 'license-end',
  };
  const { expBound: _dropped, ...older } = claims;
  const { holder: _noHolder, ...shapeless } = claims;
  const { nbf: _noNbf, ...withoutNbf } = claims;
  const { aud: _noAud, ...withoutAud } = claims;
  const hs256 = await new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'HS256', kid: await kidOf('A'), typ: LEASE_TYP })
    .sign(new TextEncoder().encode('a-shared-secret-an-attacker-chose-0123456789'));
  const base = { fingerprint: FINGERPRINT, audience: AUDIENCE, now: NOW };
  return [
    {
      name: 'valid',
      description: 'a lock’s lease signed by the current key',
      token,
      ...base,
      expect: valid(claims),
    },
    {
      name: 'valid-without-audience-check',
      description: 'the same lease, the caller not asking for an audience',
      token,
      fingerprint: FINGERPRINT,
      now: NOW,
      expect: valid(claims),
    },
    {
      name: 'valid-member-holder',
      description: 'a member’s lease',
      token: await sign(member),
      ...base,
      expect: valid(member),
    },
    {
      name: 'valid-older-key',
      description: 'signed by a key retired by a rotation, still in the key set',
      token: await sign(claims, 'B'),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'valid-capped-by-license',
      description: 'exp at the license’s end, which expBound names',
      token: await sign(cappedByLicense),
      ...base,
      expect: valid(cappedByLicense),
    },
    {
      name: 'valid-without-exp-bound',
      description: 'a lease from a server before expBound: still valid',
      token: await sign(older),
      ...base,
      expect: { valid: true, sub: claims.sub, assetNum: claims.assetNum, holderKind: 'lock', expBound: null },
    },
    {
      name: 'expired',
      description: 'exp a minute ago',
      token: await sign({ ...claims, exp: NOW - 60 }),
      ...base,
      expect: { valid: false, reason: 'expired' },
    },
    {
      name: 'not-yet-valid',
      description: 'nbf an hour ahead',
      token: await sign({ ...claims, nbf: NOW + 3600 }),
      ...base,
      expect: { valid: false, reason: 'not-yet-valid' },
    },
    {
      name: 'other-machine',
      description: 'checked out for another fingerprint',
      token,
      ...base,
      fingerprint: 'fp-conformance-another-machine',
      expect: { valid: false, reason: 'fingerprint' },
    },
    {
      name: 'other-application',
      description: 'the caller asks for another appKey as audience',
      token,
      ...base,
      audience: 'kw_another_app',
      expect: { valid: false, reason: 'audience' },
    },
    {
      name: 'unknown-key',
      description: 'signed by a key the key set does not hold',
      token: await sign(claims, 'C'),
      ...base,
      expect: { valid: false, reason: 'unknown-key' },
    },
    {
      name: 'tampered-claims',
      description: 'the payload changed (a longer exp) under the original signature',
      token: `${header}.${b64url({ ...claims, exp: NOW + 365 * DAY })}.${token.split('.')[2]}`,
      ...base,
      expect: { valid: false, reason: 'signature' },
    },
    {
      name: 'alg-none',
      description: 'alg none and no signature',
      token: `${b64url({ alg: 'none', typ: LEASE_TYP, kid: await kidOf('A') })}.${payload}.`,
      ...base,
      expect: { valid: false, reason: 'signature' },
    },
    {
      name: 'alg-hs256',
      description: 'HS256 under a secret of the attacker’s, naming a Keyward kid',
      token: hs256,
      ...base,
      expect: { valid: false, reason: 'signature' },
    },
    {
      name: 'not-a-jws',
      description: 'text that is no compact JWS',
      token: 'this-is.not-a.lease',
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'wrong-shape',
      description: 'validly signed claims without the holder',
      token: await sign(shapeless),
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'wrong-typ',
      description: 'the header’s typ is JWT, not keyward-lease+jwt',
      token: await sign(claims, 'A', { typ: 'JWT' }),
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'wrong-issuer',
      description: 'iss is not keyward',
      token: await sign({ ...claims, iss: 'somebody-else' }),
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'missing-nbf',
      description: 'no nbf claim: a required claim absent is malformed, not a time refusal',
      token: await sign(withoutNbf),
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'missing-aud',
      description: 'no aud claim while the caller asks for an audience',
      token: await sign(withoutAud),
      ...base,
      expect: { valid: false, reason: 'malformed' },
    },
    {
      name: 'expired-and-other-application',
      description: 'two defects: the times are checked before the audience',
      token: await sign({ ...claims, exp: NOW - 60 }),
      ...base,
      audience: 'kw_another_app',
      expect: { valid: false, reason: 'expired' },
    },
    {
      name: 'tampered-and-expired',
      description: 'two defects: the signature is checked before any claim',
      token: `${header}.${b64url({ ...claims, exp: NOW - 60 })}.${token.split('.')[2]}`,
      ...base,
      expect: { valid: false, reason: 'signature' },
    },
    {
      name: 'other-machine-and-license-ended',
      description: 'two defects: the machine is checked before the license’s end',
      token: await sign(ended),
      ...base,
      fingerprint: 'fp-conformance-another-machine',
      expect: { valid: false, reason: 'fingerprint' },
    },
    {
      name: 'license-ended',
      description: 'a live lease whose license (limits.endDate) ended yesterday',
      token: await sign(ended),
      ...base,
      expect: { valid: false, reason: 'license-ended' },
    },
  ];
}

async function keySet(): Promise<JSONWebKeySet> {
  const published = async (name: 'A' | 'B') => {
    const { d: _private, ...pub } = KEYS[name];
    return { ...pub, kid: await kidOf(name), alg: 'EdDSA', use: 'sig' };
  };
  return { keys: [await published('A'), await published('B')] };
}

interface WebhookCase {
  name: string;
  description: string;
  secrets: string[];
  headers: Record<string, string>;
  body: string;
  now: number;
  expect: { valid: true; id: string; type: string } | { valid: false };
}

const SECRET = 'whsec_' + Buffer.from('conformance-endpoint-secret-0001').toString('base64');
const NEXT_SECRET = 'whsec_' + Buffer.from('conformance-endpoint-secret-0002').toString('base64');

function webhookCases(): WebhookCase[] {
  const at = new Date(NOW * 1000);
  const body = eventBody({
    id: 'evt_01938f2e7c1a70008000000000000001',
    type: 'lease.denied',
    occurredAt: new Date((NOW - 2) * 1000),
    channels: ['CRM'],
    enterpriseId: '01938f2e-7c1a-7000-8000-0000000000bb',
    appKey: AUDIENCE,
    data: { assetNum: 'A-CONFORMANCE-0001', code: '90005', reason: 'all 1 seats are in use' },
    requestId: '01938f2e-7c1a-7000-8000-0000000000cc',
  } as Parameters<typeof eventBody>[0]);
  const id = 'evt_01938f2e7c1a70008000000000000001';
  const headers = (secrets: string[], timestamp = at, forBody = body) => ({
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
    'webhook-signature': signatureHeader(secrets, id, timestamp, forBody),
  });
  const ok = { valid: true as const, id, type: 'lease.denied' };
  const signed = headers([SECRET]);
  return [
    {
      name: 'valid',
      description: 'one signature, one secret',
      secrets: [SECRET],
      headers: signed,
      body,
      now: NOW,
      expect: ok,
    },
    {
      name: 'rotation-new-secret-verifies',
      description: 'signed with both secrets while a rotation overlaps; the receiver knows the new one',
      secrets: [NEXT_SECRET],
      headers: headers([SECRET, NEXT_SECRET]),
      body,
      now: NOW,
      expect: ok,
    },
    {
      name: 'receiver-holds-two-secrets',
      description: 'the receiver holds the old and the new secret; the message is signed with the old',
      secrets: [NEXT_SECRET, SECRET],
      headers: signed,
      body,
      now: NOW,
      expect: ok,
    },
    {
      name: 'other-versions-ignored',
      description: 'a signature of an unknown version beside the v1 one',
      secrets: [SECRET],
      headers: { ...signed, 'webhook-signature': `v2,AAAA ${signed['webhook-signature']}` },
      body,
      now: NOW,
      expect: ok,
    },
    {
      name: 'within-tolerance',
      description: 'sent 4 minutes before it is checked (tolerance 5 minutes)',
      secrets: [SECRET],
      headers: headers([SECRET], new Date((NOW - 240) * 1000)),
      body,
      now: NOW,
      expect: ok,
    },
    {
      name: 'tampered-body',
      description: 'one character of the body changed',
      secrets: [SECRET],
      headers: signed,
      body: body.replace('90005', '90006'),
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'wrong-secret',
      description: 'signed with a secret the receiver does not hold',
      secrets: [NEXT_SECRET],
      headers: signed,
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'too-old',
      description: 'sent 6 minutes before it is checked: a replay',
      secrets: [SECRET],
      headers: headers([SECRET], new Date((NOW - 360) * 1000)),
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'from-the-future',
      description: 'timestamped 6 minutes ahead',
      secrets: [SECRET],
      headers: headers([SECRET], new Date((NOW + 360) * 1000)),
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'timestamp-changed',
      description: 'the timestamp header moved a second under the same signature',
      secrets: [SECRET],
      headers: { ...signed, 'webhook-timestamp': String(NOW - 1) },
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'missing-signature',
      description: 'no webhook-signature header',
      secrets: [SECRET],
      headers: { 'webhook-id': id, 'webhook-timestamp': String(NOW) },
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'only-other-versions',
      description: 'no v1 signature at all',
      secrets: [SECRET],
      headers: { ...signed, 'webhook-signature': signed['webhook-signature'].replace('v1,', 'v2,') },
      body,
      now: NOW,
      expect: { valid: false },
    },
    {
      name: 'id-differs-from-event',
      description: 'signed correctly for another webhook-id than the event’s id',
      secrets: [SECRET],
      headers: {
        'webhook-id': 'evt_another',
        'webhook-timestamp': String(NOW),
        'webhook-signature': signatureHeader([SECRET], 'evt_another', at, body),
      },
      body,
      now: NOW,
      expect: { valid: false },
    },
  ];
}

async function document(value: object): Promise<string> {
  return format(JSON.stringify(value), { parser: 'json' });
}

let h: Harness;
let leases: { jwks: JSONWebKeySet; cases: LeaseCase[] };
let webhooks: { cases: WebhookCase[] };

beforeAll(async () => {
  h = await startHarness();
  leases = { jwks: await keySet(), cases: await leaseCases() };
  webhooks = { cases: webhookCases() };
  if (WRITE) {
    fs.writeFileSync(path.join(DIR, 'leases.json'), await document({ version: 1, now: NOW, ...leases }));
    fs.writeFileSync(
      path.join(DIR, 'webhooks.json'),
      await document({ version: 1, toleranceSeconds: 300, ...webhooks }),
    );
  }
}, 60_000);
afterAll(async () => h.close());

describe('the SDK conformance vectors', () => {
  it('are the committed files', async () => {
    expect(fs.readFileSync(path.join(DIR, 'leases.json'), 'utf8')).toBe(
      await document({ version: 1, now: NOW, ...leases }),
    );
    expect(fs.readFileSync(path.join(DIR, 'webhooks.json'), 'utf8')).toBe(
      await document({ version: 1, toleranceSeconds: 300, ...webhooks }),
    );
  });

  it('have the claims a server signs today, no more and no fewer', async () => {
    const world = await runtimeWorld(h);
    await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 7);
    const { assetNum, crmProductId } = await lockWith(world);
    const lease = leaseOf(
      await world.runtime('/leases', { fingerprint: fingerprint(), assetNum, crmProductId, offlineDays: 1 }),
    );
    const served = decodeJwt(lease.offlineLease ?? '');
    expect(Object.keys(baseClaims()).sort()).toEqual(Object.keys(served).sort());
  });

  it('are judged by the TypeScript client as each case expects', async () => {
    for (const c of leases.cases) {
      const outcome = await verifyLease(c.token, {
        jwks: leases.jwks,
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
      expect(outcome, c.name).toEqual(c.expect);
    }
    for (const c of webhooks.cases) {
      const outcome = await verifyWebhook(c.secrets, c.body, c.headers, { now: () => c.now * 1000 }).then(
        (event) => ({ valid: true, id: event.id, type: event.type }),
        () => ({ valid: false }),
      );
      expect(outcome, c.name).toEqual(c.expect);
    }
  });
});
