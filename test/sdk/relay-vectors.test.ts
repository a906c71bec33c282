import { createPrivateKey, sign as signBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GRANT_TYP,
  LEASE_ISSUER,
  LEASE_TYP,
  verifyLease,
  type JSONWebKeySet,
  type LeaseFailure,
  type OfflineLeaseClaims,
  type PoolGrantClaims,
} from '@keyward/client';
import { relayPublicJwk, signRelayLease } from '../../src/domain/relay/relay-lease.js';
import { startHarness, type Harness } from '../support/harness.js';
import {
  AUDIENCE,
  baseClaims,
  DAY,
  document,
  judged,
  FINGERPRINT,
  keySet,
  KEYS,
  kidOf,
  NOW,
  valid,
  type KeyName,
  type LeaseCase,
  type LeaseExpectation,
} from './conformance-keys.js';

// The relay half of the SDK conformance suite: sdks/conformance/relay-leases.json, leases a relay
// signed with its own key, each carrying the pool grant (signed by the vendor's key) that certifies
// that key. Every SDK verifies them against the vendor's key set alone. Rewrite the file with
// `KEYWARD_WRITE_VECTORS=1 npx vitest run test/sdk/relay-vectors.test.ts`.

const FILE = path.resolve(import.meta.dirname, '../../sdks/conformance/relay-leases.json');
const WRITE = process.env.KEYWARD_WRITE_VECTORS === '1';
const OTHER_MACHINE = 'fp-conformance-another-machine';

const relayKey = (name: 'R' | 'S') => {
  const { kty, crv, x, d } = KEYS[name];
  return { kty: kty as 'OKP', crv: crv as 'Ed25519', x, d };
};

async function baseGrant(): Promise<PoolGrantClaims> {
  return {
    iss: LEASE_ISSUER,
    sub: 'relay-conformance-0001',
    jti: 'grant-conformance-0001',
    iat: NOW - DAY,
    nbf: NOW - DAY,
    exp: NOW + 30 * DAY,
    relay: { key: await relayPublicJwk(relayKey('R')), fingerprint: 'fp-conformance-relay-host' },
    licenses: [
      { assetNum: 'A-CONFORMANCE-0001', crmProductId: 'P-CONFORMANCE', seats: 10 },
      { assetNum: 'A-CONFORMANCE-0002', crmProductId: null, seats: 2 },
    ],
    machines: null,
    overage: { policy: 'refuse', seats: 0 },
  };
}

/** A relay's lease of the first granted license: ten seats, an hour. */
const relayClaims = (): OfflineLeaseClaims => {
  const claims = baseClaims();
  return { ...claims, exp: NOW + 3600, limits: { ...claims.limits, concurrent: 10 } };
};

/** Signed as RuntimeKeysService.signGrant signs: EdDSA, the vendor key's thumbprint, typ keyward-grant+jwt. */
async function signGrant(
  claims: object,
  name: KeyName = 'A',
  header: Record<string, unknown> = {},
): Promise<string> {
  const key = await importJWK(KEYS[name], 'EdDSA');
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: await kidOf(name), typ: GRANT_TYP, ...header })
    .sign(key);
}

/** A lease signed by a relay key with any header: what a relay that holds that key can make. */
async function signLease(claims: object, name: KeyName, header: Record<string, unknown>): Promise<string> {
  const key = await importJWK(KEYS[name], 'EdDSA');
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: await kidOf(name), typ: LEASE_TYP, ...header })
    .sign(key);
}

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A grant of these header and payload texts, signed over them as written by a vendor key. */
function grantAsWritten(header: string, payload: string, name: KeyName = 'A'): string {
  const input = `${b64url(header)}.${b64url(payload)}`;
  const sig = signBytes(null, Buffer.from(input), createPrivateKey({ key: KEYS[name], format: 'jwk' }));
  return `${input}.${sig.toString('base64url')}`;
}

async function relayCases(): Promise<LeaseCase[]> {
  const grant = await baseGrant();
  const claims = relayClaims();
  const grantToken = await signGrant(grant);
  const lease = (c: OfflineLeaseClaims = claims, g: string = grantToken) =>
    signRelayLease(c, relayKey('R'), g);
  const base = { fingerprint: FINGERPRINT, audience: AUDIENCE, now: NOW };
  const second: OfflineLeaseClaims = {
    ...claims,
    holder: { kind: 'lock', assetNum: 'A-CONFORMANCE-0002' },
    assetNum: 'A-CONFORMANCE-0002',
    product: { crmProductId: null, productUri: 'gms-2002', productName: 'Viewer' },
    limits: { ...claims.limits, concurrent: 2 },
  };
  const sharedClaims: OfflineLeaseClaims = {
    ...claims,
    limits: { ...claims.limits, timeDurationSeconds: 36_000, amount: 500 },
  };
  const grantHeader = JSON.stringify({ alg: 'EdDSA', kid: await kidOf('A'), typ: GRANT_TYP });
  const { relay: _noRelay, ...relayless } = grant;
  return [
    {
      name: 'relay-valid',
      description: 'a relay’s lease, its grant signed by the vendor’s current key',
      token: await lease(),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'relay-valid-older-vendor-key',
      description: 'the grant signed by a vendor key retired by a rotation, still published',
      token: await lease(claims, await signGrant(grant, 'B')),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'relay-valid-second-license',
      description: 'the grant’s second license, a product without a CRM id, at its two seats',
      token: await lease(second),
      ...base,
      expect: valid(second),
    },
    {
      name: 'relay-valid-allow-list',
      description: 'the grant lists the machines that may check out, this one among them',
      token: await lease(claims, await signGrant({ ...grant, machines: [OTHER_MACHINE, FINGERPRINT] })),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'relay-valid-usage-shares',
      description:
        'the grant holds shares of the licenses’ usage limits (timeSeconds, amount), which the lease names as its limits',
      token: await lease(
        sharedClaims,
        await signGrant({
          ...grant,
          licenses: [
            { ...grant.licenses[0], timeSeconds: 36_000, amount: 500 },
            { ...grant.licenses[1], amount: 20 },
          ],
        }),
      ),
      ...base,
      expect: valid(sharedClaims),
    },
    {
      name: 'relay-grant-expired',
      description: 'the grant ended a minute ago; the lease itself runs for an hour',
      token: await lease(claims, await signGrant({ ...grant, exp: NOW - 60 })),
      ...base,
      expect: refusal('grant-expired'),
    },
    {
      name: 'relay-grant-not-yet-valid',
      description: 'the grant starts in an hour',
      token: await lease(claims, await signGrant({ ...grant, nbf: NOW + 3600 })),
      ...base,
      expect: refusal('not-yet-valid'),
    },
    {
      name: 'relay-key-not-granted',
      description: 'signed by another relay key, under its own kid: the grant certifies R, not S',
      token: await signLease(claims, 'S', { grant: grantToken }),
      ...base,
      expect: refusal('unknown-key'),
    },
    {
      name: 'relay-key-granted-kid-other-key',
      description: 'signed by another key under the granted key’s kid',
      token: await signLease(claims, 'S', { grant: grantToken, kid: grant.relay.key.kid }),
      ...base,
      expect: refusal('signature'),
    },
    {
      name: 'relay-another-vendors-grant',
      description: 'the grant signed by a key that is not the vendor’s',
      token: await lease(claims, await signGrant(grant, 'C')),
      ...base,
      expect: refusal('unknown-key'),
    },
    {
      name: 'relay-another-vendors-grant-same-kid',
      description: 'the grant signed by another key under the vendor key’s kid',
      token: await lease(claims, await signGrant(grant, 'C', { kid: await kidOf('A') })),
      ...base,
      expect: refusal('signature'),
    },
    {
      name: 'relay-grant-tampered',
      description: 'the grant’s seats raised to 1,000 after the vendor signed it',
      token: await lease(
        { ...claims, limits: { ...claims.limits, concurrent: 1000 } },
        (() => {
          const [h, , s] = grantToken.split('.') as [string, string, string];
          const more = { ...grant, licenses: grant.licenses.map((l) => ({ ...l, seats: 1000 })) };
          return `${h}.${b64url(more)}.${s}`;
        })(),
      ),
      ...base,
      expect: refusal('signature'),
    },
    {
      name: 'relay-lease-without-grant',
      description: 'signed by the relay key but carrying no grant: no key of the vendor’s set',
      token: await signLease(claims, 'R', {}),
      ...base,
      expect: refusal('unknown-key'),
    },
    {
      name: 'relay-vendor-lease-with-grant',
      description:
        'a lease the vendor signed, a grant added to its header: not the relay key the grant certifies',
      token: await signLease(claims, 'A', { grant: grantToken }),
      ...base,
      expect: refusal('unknown-key'),
    },
    {
      name: 'relay-lease-as-grant',
      description: 'a lease the vendor signed, given as the grant: typ and claims are a lease’s',
      token: await lease(claims, await signLease({ ...baseClaims(), ...grant }, 'A', {})),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-not-a-string',
      description: 'the header’s grant is a number',
      token: await signLease(claims, 'R', { grant: 42 }),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-two-segments',
      description: 'the header’s grant is not a compact JWS',
      token: await signLease(claims, 'R', { grant: grantToken.split('.').slice(0, 2).join('.') }),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-crit',
      description: 'the grant’s header names a critical extension',
      token: await lease(
        claims,
        grantAsWritten(
          JSON.stringify({ alg: 'EdDSA', kid: await kidOf('A'), typ: GRANT_TYP, crit: ['exp'] }),
          JSON.stringify(grant),
        ),
      ),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-hs256',
      description: 'the grant is an HMAC with a secret of the attacker’s choosing',
      token: await lease(
        claims,
        await new SignJWT({ ...grant })
          .setProtectedHeader({ alg: 'HS256', kid: await kidOf('A'), typ: GRANT_TYP })
          .sign(new TextEncoder().encode('a-shared-secret-an-attacker-chose-0123456789')),
      ),
      ...base,
      expect: refusal('signature'),
    },
    {
      name: 'relay-grant-without-kid',
      description: 'the grant’s header names no key',
      token: await lease(
        claims,
        grantAsWritten(JSON.stringify({ alg: 'EdDSA', typ: GRANT_TYP }), JSON.stringify(grant)),
      ),
      ...base,
      expect: refusal('unknown-key'),
    },
    {
      name: 'relay-grant-member-twice',
      description: 'the grant names its relay twice, the second with the other relay key',
      token: await lease(
        claims,
        grantAsWritten(
          grantHeader,
          JSON.stringify(grant).replace(
            '"relay":',
            `"relay":${JSON.stringify({ ...grant.relay, key: await relayPublicJwk(relayKey('S')) })},"relay":`,
          ),
        ),
      ),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-without-relay',
      description: 'the grant certifies no relay key',
      token: await lease(claims, await signGrant(relayless)),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-short-key',
      description: 'the grant’s relay key is 31 bytes',
      token: await lease(
        claims,
        await signGrant({
          ...grant,
          relay: {
            ...grant.relay,
            key: { ...grant.relay.key, x: Buffer.alloc(31, 7).toString('base64url') },
          },
        }),
      ),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-no-seats',
      description: 'a license of the grant has 0 seats',
      token: await lease(
        claims,
        await signGrant({ ...grant, licenses: grant.licenses.map((l) => ({ ...l, seats: 0 })) }),
      ),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-grant-no-licenses',
      description: 'the grant grants no license',
      token: await lease(claims, await signGrant({ ...grant, licenses: [] })),
      ...base,
      expect: refusal('malformed'),
    },
    {
      name: 'relay-beyond-seats',
      description: 'the lease names 11 seats of a license granted 10',
      token: await lease({ ...claims, limits: { ...claims.limits, concurrent: 11 } }),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-beyond-unlimited-seats',
      description: 'the lease names no seat limit: more than any grant gives',
      token: await lease({ ...claims, limits: { ...claims.limits, concurrent: null } }),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-beyond-seats-absent',
      description: 'the lease names no seats at all',
      token: await lease(
        (() => {
          const { concurrent: _none, ...limits } = claims.limits;
          return { ...claims, limits } as unknown as OfflineLeaseClaims;
        })(),
      ),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-beyond-product',
      description: 'a product of the granted license that the grant does not name',
      token: await lease({ ...claims, product: { ...claims.product, crmProductId: 'P-NOT-GRANTED' } }),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-beyond-license',
      description: 'a license the grant does not name',
      token: await lease({
        ...claims,
        holder: { kind: 'lock', assetNum: 'A-NOT-GRANTED' },
        assetNum: 'A-NOT-GRANTED',
      }),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-beyond-time',
      description: 'the lease runs a second past its grant',
      token: await lease(claims, await signGrant({ ...grant, exp: claims.exp - 1 })),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-machine-not-listed',
      description: 'the grant lists the machines that may check out, and not this one',
      token: await lease(claims, await signGrant({ ...grant, machines: [OTHER_MACHINE] })),
      ...base,
      expect: refusal('beyond-grant'),
    },
    {
      name: 'relay-other-machine',
      description: 'a relay’s lease checked out for another machine',
      token: await lease(),
      ...base,
      fingerprint: OTHER_MACHINE,
      expect: refusal('fingerprint'),
    },
    {
      name: 'relay-lease-expired',
      description: 'a relay’s lease that expired a minute ago, its grant running',
      token: await lease({ ...claims, exp: NOW - 60 }),
      ...base,
      expect: refusal('expired'),
    },
    {
      name: 'relay-other-application',
      description: 'a relay’s lease, the caller asking for another appKey',
      token: await lease(),
      ...base,
      audience: 'kw_another_app',
      expect: refusal('audience'),
    },
  ];
}

function refusal(reason: LeaseFailure): LeaseExpectation {
  return { valid: false, reason };
}

let h: Harness;
let relay: { jwks: JSONWebKeySet; cases: LeaseCase[] };

beforeAll(async () => {
  h = await startHarness();
  relay = { jwks: await keySet(), cases: await relayCases() };
  if (WRITE) fs.writeFileSync(FILE, await document({ version: 1, now: NOW, ...relay }));
}, 60_000);
afterAll(async () => h.close());

describe('the relay conformance vectors', () => {
  it('are the committed file', async () => {
    expect(fs.readFileSync(FILE, 'utf8')).toBe(await document({ version: 1, now: NOW, ...relay }));
  });

  it('are judged by the TypeScript client as each case expects', async () => {
    for (const c of relay.cases) {
      expect(await judged(c, relay.jwks), c.name).toEqual(c.expect);
    }
  });

  it("chain to the server's own keys: a grant it signs certifies a relay key whose leases verify with its JWKS", async () => {
    const keys = h.app.services.runtimeKeys;
    const grant = {
      ...(await baseGrant()),
      nbf: Math.floor(Date.now() / 1000) - 60,
      exp: Math.floor(Date.now() / 1000) + DAY,
    };
    const { token: grantToken } = await keys.signGrant(grant);
    const claims = { ...relayClaims(), nbf: grant.nbf, iat: grant.nbf, exp: grant.nbf + 3600 };
    const token = await signRelayLease(claims, relayKey('R'), grantToken);
    const jwks = (await keys.jwks()) as JSONWebKeySet;
    await expect(
      verifyLease(token, { jwks, fingerprint: FINGERPRINT, audience: AUDIENCE }),
    ).resolves.toMatchObject({
      sub: claims.sub,
    });
    // The same lease with the suite's key set: the server's grant is another vendor's there.
    await expect(verifyLease(token, { jwks: relay.jwks, fingerprint: FINGERPRINT })).rejects.toMatchObject({
      reason: 'unknown-key',
    });
  });
});
