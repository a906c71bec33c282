import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyLease } from '../../packages/client/src/index.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import type { OfflineLeaseClaims } from '../../src/domain/runtime/lease-claims.js';

// The published keys and the operator's view of them, through HTTP: the JWKS anyone may fetch,
// the admin API that lists and rotates. One server keeps its keys in DATA_DIR; the other has its
// key from RUNTIME_SIGNING_KEY.
let scratch: string;
let h: Harness;
let managed: Harness;

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-jwks-'));
  h = await startHarness({ DATA_DIR: path.join(scratch, 'data') });
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  managed = await startHarness({ DATA_DIR: path.join(scratch, 'unused'), RUNTIME_SIGNING_KEY: pem });
});
afterAll(async () => {
  await h.close();
  await managed.close();
  fs.rmSync(scratch, { recursive: true, force: true });
});

const admin = (server: Harness, method: 'GET' | 'POST', url: string, key: string | null = ADMIN_KEY) =>
  server.app.inject({
    method,
    url: `/admin${url}`,
    headers: key === null ? {} : { authorization: `Bearer ${key}` },
  });

interface KeyList {
  source: string;
  keys: Array<{ kid: string; createdAt: number; retiredAt: number | null; current: boolean }>;
}

function claims(): OfflineLeaseClaims {
  const now = Math.floor(Date.now() / 1000);
  const id = uniqueCode('lease');
  return {
    iss: 'keyward',
    sub: id,
    jti: id,
    aud: 'kw_app',
    iat: now,
    nbf: now,
    exp: now + 600,
    holder: { kind: 'lock', assetNum: 'A1' },
    fingerprint: 'machine-1',
    assetNum: 'A1',
    product: { crmProductId: null, productUri: null, productName: null },
    limits: { concurrent: null, timeDurationSeconds: null, amount: null, startDate: null, endDate: null },
  };
}

describe('GET /.well-known/jwks.json', () => {
  it('publishes the signing keys to anyone, cacheable, public halves only', async () => {
    const { kid } = await h.app.services.runtimeKeys.sign(claims());
    const response = await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.headers['cache-control']).toBe('public, max-age=300');
    expect(response.headers['access-control-allow-origin']).toBe('*');
    const body = response.json() as { keys: Array<Record<string, unknown>> };
    expect(body).toEqual(await h.app.services.runtimeKeys.jwks());
    expect(body.keys.find((k) => k.kid === kid)).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      kid,
      alg: 'EdDSA',
      use: 'sig',
    });
    expect(response.body).not.toContain('"d"');
  });

  it('verifies a lease with what it serves', async () => {
    const { token } = await h.app.services.runtimeKeys.sign(claims());
    const jwks = (await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();
    await expect(verifyLease(token, { jwks, fingerprint: 'machine-1' })).resolves.toMatchObject({
      fingerprint: 'machine-1',
    });
  });
});

describe('admin API: runtime keys', () => {
  it('is for the operator only', async () => {
    for (const key of [null, 'wrong']) {
      expect((await admin(h, 'GET', '/runtime/keys', key)).statusCode).toBe(401);
      expect((await admin(h, 'POST', '/runtime/keys/rotate', key)).statusCode).toBe(401);
    }
  });

  it('lists the keys, the current one marked', async () => {
    const kid = await h.app.services.runtimeKeys.prepare();
    const response = await admin(h, 'GET', '/runtime/keys');
    expect(response.statusCode).toBe(200);
    const listed = response.json() as KeyList;
    expect(listed.source).toBe('file');
    expect(listed.keys.find((k) => k.current)).toMatchObject({ kid, retiredAt: null });
    expect(listed.keys.filter((k) => k.current)).toHaveLength(1);
  });

  it('rotates: the new key signs, the previous one stays published, retired, and the change is audited', async () => {
    const { token: before } = await h.app.services.runtimeKeys.sign(claims());
    const response = await admin(h, 'POST', '/runtime/keys/rotate');
    expect(response.statusCode).toBe(200);
    const rotated = response.json() as { kid: string; previousKid: string };
    expect(Object.keys(rotated).sort()).toEqual(['kid', 'previousKid']);
    expect(rotated.kid).not.toBe(rotated.previousKid);

    const listed = (await admin(h, 'GET', '/runtime/keys')).json() as KeyList;
    expect(listed.keys.find((k) => k.kid === rotated.kid)?.current).toBe(true);
    expect(listed.keys.find((k) => k.kid === rotated.previousKid)).toMatchObject({
      current: false,
      retiredAt: expect.any(Number),
    });
    const jwks = (await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json() as {
      keys: Array<{ kid: string }>;
    };
    expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([rotated.kid, rotated.previousKid]));
    await expect(verifyLease(before, { jwks, fingerprint: 'machine-1' })).resolves.toBeDefined();
    expect((await h.app.services.runtimeKeys.sign(claims())).kid).toBe(rotated.kid);

    const audit = (
      await h.app.inject({
        method: 'GET',
        url: `/admin/audit?subject=${rotated.kid}&limit=5`,
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json() as Array<{ action: string; operator: string; detail: Record<string, unknown> }>;
    expect(audit).toEqual([
      expect.objectContaining({
        action: 'runtime_key.rotated',
        operator: 'admin-api',
        detail: { previousKid: rotated.previousKid },
      }),
    ]);
  });

  it('refuses to rotate a key RUNTIME_SIGNING_KEY sets, saying what to do instead', async () => {
    const response = await admin(managed, 'POST', '/runtime/keys/rotate');
    expect(response.statusCode).toBe(409);
    expect((response.json() as { error: string }).error).toMatch(/RUNTIME_SIGNING_KEY.*restart/);
    const listed = (await admin(managed, 'GET', '/runtime/keys')).json() as KeyList;
    expect(listed.source).toBe('variable');
    expect(listed.keys.filter((k) => k.current)).toHaveLength(1);
    expect(fs.existsSync(path.join(scratch, 'unused'))).toBe(false);
  });
});
