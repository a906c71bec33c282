import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KeywardLeaseError,
  verifyLease,
  type LeaseFailure,
  type OfflineLeaseClaims,
} from '../../packages/client/src/index.js';

// verifyLease against leases signed here the way the server signs them (EdDSA, kid, typ), and
// against everything a forged, stale or borrowed lease could be.

interface Signer {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

async function newSigner(): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  const publicJwk = await exportJWK(publicKey);
  return { kid: await calculateJwkThumbprint(publicJwk), privateKey, publicJwk };
}

const jwksOf = (...signers: Signer[]): JSONWebKeySet => ({
  keys: signers.map((s) => ({ ...s.publicJwk, kid: s.kid, alg: 'EdDSA', use: 'sig' })),
});

const NOW = new Date('2030-01-01T00:00:00Z');
const nowSeconds = Math.floor(NOW.getTime() / 1000);

function claims(overrides: Partial<OfflineLeaseClaims> = {}): OfflineLeaseClaims {
  return {
    iss: 'keyward',
    sub: 'lease-1',
    jti: 'lease-1',
    aud: 'kw_app',
    iat: nowSeconds - 60,
    nbf: nowSeconds - 60,
    exp: nowSeconds + 3600,
    holder: { kind: 'member', memberGlobalId: 'm1', enterpriseGlobalId: 'e1' },
    fingerprint: 'machine-1',
    assetNum: 'A0001',
    product: { crmProductId: 'P1', productUri: null, productName: 'CAD' },
    limits: { concurrent: 1, timeDurationSeconds: 7200, amount: null, startDate: null, endDate: null },
    ...overrides,
  };
}

async function sign(
  signer: Signer,
  payload: Record<string, unknown> = { ...claims() },
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT(payload)
    .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ: 'keyward-lease+jwt', ...header })
    .sign(signer.privateKey);
}

async function refusal(promise: Promise<unknown>): Promise<LeaseFailure> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(KeywardLeaseError);
    return (error as KeywardLeaseError).reason;
  }
  throw new Error('the lease was accepted');
}

const encode = (value: unknown) => base64url.encode(JSON.stringify(value));

let signer: Signer;
let other: Signer;
let jwks: JSONWebKeySet;
const options = () => ({ jwks, fingerprint: 'machine-1', now: NOW });

beforeAll(async () => {
  signer = await newSigner();
  other = await newSigner();
  jwks = jwksOf(signer);
});

describe('verifyLease', () => {
  it('resolves a valid lease to its claims', async () => {
    const verified = await verifyLease(await sign(signer), { ...options(), audience: 'kw_app' });
    expect(verified).toEqual(claims());
  });

  it('refuses a payload changed after signing: signature', async () => {
    const [header, , signature] = (await sign(signer)).split('.');
    const forged = `${header}.${encode({ ...claims(), fingerprint: 'machine-2' })}.${signature}`;
    expect(await refusal(verifyLease(forged, { ...options(), fingerprint: 'machine-2' }))).toBe('signature');
  });

  it('refuses a lease signed by another key under a published kid: signature', async () => {
    const token = await new SignJWT({ ...claims() })
      .setProtectedHeader({ alg: 'EdDSA', kid: signer.kid, typ: 'keyward-lease+jwt' })
      .sign(other.privateKey);
    expect(await refusal(verifyLease(token, options()))).toBe('signature');
  });

  it('refuses a kid the key set does not hold: unknown-key', async () => {
    expect(await refusal(verifyLease(await sign(other), options()))).toBe('unknown-key');
    expect(await refusal(verifyLease(await sign(signer, undefined, { kid: 'no-such-kid' }), options()))).toBe(
      'unknown-key',
    );
  });

  it('accepts any key of the set: a lease from before a rotation verifies', async () => {
    const both = jwksOf(other, signer);
    await expect(verifyLease(await sign(signer), { ...options(), jwks: both })).resolves.toBeDefined();
    await expect(verifyLease(await sign(other), { ...options(), jwks: both })).resolves.toBeDefined();
  });

  it('refuses an expired lease, and one not valid yet', async () => {
    const token = await sign(signer);
    const later = new Date(NOW.getTime() + 2 * 3600 * 1000);
    expect(await refusal(verifyLease(token, { ...options(), now: later }))).toBe('expired');
    const earlier = new Date(NOW.getTime() - 3600 * 1000);
    expect(await refusal(verifyLease(token, { ...options(), now: earlier }))).toBe('not-yet-valid');
  });

  it("refuses another machine's lease: fingerprint", async () => {
    expect(await refusal(verifyLease(await sign(signer), { ...options(), fingerprint: 'machine-2' }))).toBe(
      'fingerprint',
    );
  });

  it("refuses another application's lease when the audience is given: audience", async () => {
    expect(await refusal(verifyLease(await sign(signer), { ...options(), audience: 'kw_other' }))).toBe(
      'audience',
    );
  });

  it('refuses an unsigned token (alg none)', async () => {
    const unsigned = `${encode({ alg: 'none', typ: 'keyward-lease+jwt' })}.${encode(claims())}.`;
    expect(await refusal(verifyLease(unsigned, options()))).toBe('signature');
  });

  it('refuses an HS256 token, even one keyed with the public key', async () => {
    // The classic confusion: the public key's bytes used as an HMAC secret.
    const secret = new TextEncoder().encode(String(signer.publicJwk.x));
    const token = await new SignJWT({ ...claims() })
      .setProtectedHeader({ alg: 'HS256', kid: signer.kid, typ: 'keyward-lease+jwt' })
      .sign(secret);
    expect(await refusal(verifyLease(token, options()))).toBe('signature');
  });

  it('refuses what is not a Keyward lease: malformed', async () => {
    expect(await refusal(verifyLease('not-a-token', options()))).toBe('malformed');
    expect(await refusal(verifyLease(await sign(signer, undefined, { typ: 'JWT' }), options()))).toBe(
      'malformed',
    );
    expect(await refusal(verifyLease(await sign(signer, { ...claims(), iss: 'someone' }), options()))).toBe(
      'malformed',
    );
    for (const missing of ['fingerprint', 'exp', 'holder']) {
      const payload: Record<string, unknown> = { ...claims() };
      delete payload[missing];
      expect(await refusal(verifyLease(await sign(signer, payload), options())), missing).toBe('malformed');
    }
    const limits = { ...claims().limits, endDate: '2030-01-02' };
    expect(await refusal(verifyLease(await sign(signer, { ...claims(), limits }), options()))).toBe(
      'malformed',
    );
    expect(
      await refusal(verifyLease(await sign(signer, { ...claims(), expBound: 'forever' }), options())),
    ).toBe('malformed');
  });

  it('resolves the bound that set exp, and a lease signed before the claim existed', async () => {
    const bounded = claims({ expBound: 'license-end' });
    await expect(verifyLease(await sign(signer, { ...bounded }), options())).resolves.toEqual(bounded);
    await expect(verifyLease(await sign(signer), options())).resolves.not.toHaveProperty('expBound');
  });

  it('refuses a lease whose license ended, even within its exp: license-ended', async () => {
    const ended = claims({ limits: { ...claims().limits, endDate: NOW.getTime() - 1 } });
    const token = await sign(signer, { ...ended });
    expect(await refusal(verifyLease(token, options()))).toBe('license-ended');
    await expect(verifyLease(token, options())).rejects.toThrow(
      'lease refused (license-ended): the license ended at 2029-12-31T23:59:59.999Z',
    );
    // Up to its end date the license runs.
    const ending = claims({ limits: { ...claims().limits, endDate: NOW.getTime() } });
    await expect(verifyLease(await sign(signer, { ...ending }), options())).resolves.toEqual(ending);
  });

  it('checks the license after the signature, the times, the shape and the machine', async () => {
    const ended = { ...claims(), limits: { ...claims().limits, endDate: NOW.getTime() - 1 } };
    const token = await sign(signer, ended);
    const later = new Date(NOW.getTime() + 2 * 3600 * 1000);
    expect(await refusal(verifyLease(token, { ...options(), now: later }))).toBe('expired');
    expect(await refusal(verifyLease(token, { ...options(), jwks: jwksOf(other) }))).toBe('unknown-key');
    const shapeless: Record<string, unknown> = { ...ended };
    delete shapeless.holder;
    expect(await refusal(verifyLease(await sign(signer, shapeless), options()))).toBe('malformed');
    expect(await refusal(verifyLease(token, { ...options(), fingerprint: 'machine-2' }))).toBe('fingerprint');
  });
});

describe('verifyLease with a JWKS URL', () => {
  let server: http.Server;
  let url: string;
  let served: JSONWebKeySet;
  let fetches = 0;

  beforeAll(async () => {
    served = jwksOf(signer);
    server = http.createServer((request, response) => {
      fetches += 1;
      if (request.url !== '/.well-known/jwks.json') {
        response.writeHead(404).end();
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(served));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => new Promise<void>((resolve) => server.close(() => resolve())));

  it('fetches the key set once and verifies with it', async () => {
    const jwksUrl = `${url}/.well-known/jwks.json`;
    const token = await sign(signer);
    await verifyLease(token, { jwksUrl, fingerprint: 'machine-1', now: NOW });
    await verifyLease(token, { jwksUrl, fingerprint: 'machine-1', now: NOW });
    expect(fetches).toBe(1);
    expect(await refusal(verifyLease(token, { jwksUrl, fingerprint: 'machine-2', now: NOW }))).toBe(
      'fingerprint',
    );
  });

  it('says so when the key set cannot be had: jwks-unavailable', async () => {
    const token = await sign(signer);
    const missing = `${url}/nowhere.json`;
    expect(await refusal(verifyLease(token, { jwksUrl: missing, fingerprint: 'machine-1', now: NOW }))).toBe(
      'jwks-unavailable',
    );
    const closed = 'http://127.0.0.1:9/.well-known/jwks.json';
    expect(await refusal(verifyLease(token, { jwksUrl: closed, fingerprint: 'machine-1', now: NOW }))).toBe(
      'jwks-unavailable',
    );
  });
});
