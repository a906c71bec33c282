import { generateKeyPairSync } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeywardLeaseError, verifyLease } from '../../packages/client/src/index.js';
import { loadConfig } from '../../src/config.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { thumbprintOf } from '../../src/domain/runtime-keys/ed25519.js';
import {
  RuntimeKeyManagedError,
  RuntimeKeysService,
} from '../../src/domain/runtime-keys/runtime-keys.service.js';
import type { OfflineLeaseClaims } from '../../src/domain/runtime/lease-claims.js';
import { openTestDatabase } from '../support/database.js';
import { uniqueCode } from '../support/harness.js';

let database: DatabaseHandle;
const scratch: string[] = [];

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => {
  await database.close();
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** A DATA_DIR that does not exist yet, as at a first start. */
function freshDataDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-runtime-keys-'));
  scratch.push(dir);
  return path.join(dir, 'data');
}

const fileKeys = (dataDir: string) => new RuntimeKeysService(database.db, { variable: undefined, dataDir });
const keyFileOf = (dataDir: string) => path.join(dataDir, 'runtime-keys.json');

function claims(fingerprint: string): OfflineLeaseClaims {
  const now = Math.floor(Date.now() / 1000);
  const id = uniqueCode('lease');
  return {
    iss: 'keyward',
    sub: id,
    jti: id,
    aud: 'kw_app',
    iat: now,
    nbf: now,
    exp: now + 3600,
    holder: { kind: 'lock', assetNum: 'A0001' },
    fingerprint,
    assetNum: 'A0001',
    product: { crmProductId: 'P1', productUri: null, productName: 'CAD' },
    limits: { concurrent: 1, timeDurationSeconds: null, amount: null, startDate: null, endDate: null },
  };
}

describe('runtime signing keys in DATA_DIR', () => {
  it('makes the key file at the first start, owner-only, with one key named by its thumbprint', async () => {
    const dataDir = freshDataDir();
    const kid = await fileKeys(dataDir).prepare();
    const file = keyFileOf(dataDir);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(fs.readFileSync(file, 'utf8')) as {
      keys: Array<{ kid: string; privateJwk: { kty: string; crv: string; x: string; d: string } }>;
    };
    expect(stored.keys).toHaveLength(1);
    expect(stored.keys[0]?.kid).toBe(kid);
    expect(stored.keys[0]?.privateJwk).toMatchObject({ kty: 'OKP', crv: 'Ed25519' });
    expect(await thumbprintOf(stored.keys[0]!.privateJwk as never)).toBe(kid);
    // Nothing left behind by the atomic write.
    expect(fs.readdirSync(dataDir)).toEqual(['runtime-keys.json']);
  });

  it('keeps the key across a restart: the same kid signs', async () => {
    const dataDir = freshDataDir();
    const first = await fileKeys(dataDir).prepare();
    const before = fs.readFileSync(keyFileOf(dataDir), 'utf8');
    const restarted = fileKeys(dataDir);
    const { kid } = await restarted.sign(claims('fp'));
    expect(kid).toBe(first);
    expect(fs.readFileSync(keyFileOf(dataDir), 'utf8')).toBe(before);
  });

  it('publishes a key before its first signature, and signs with the lease header', async () => {
    const dataDir = freshDataDir();
    const keys = fileKeys(dataDir);
    const { token, kid } = await keys.sign(claims('fp'));
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'EdDSA', kid, typ: 'keyward-lease+jwt' });
    const published = (await keys.jwks()).keys.find((k) => k.kid === kid);
    expect(published).toMatchObject({ kty: 'OKP', crv: 'Ed25519', kid, alg: 'EdDSA', use: 'sig' });
    expect(published).not.toHaveProperty('d');
  });

  it('rotates: a new kid signs, the previous one is retired and both stay published', async () => {
    const dataDir = freshDataDir();
    const keys = fileKeys(dataDir);
    const before = await keys.prepare();
    const rotated = await keys.rotate();
    expect(rotated.previousKid).toBe(before);
    expect(rotated.kid).not.toBe(before);
    expect((await keys.sign(claims('fp'))).kid).toBe(rotated.kid);

    const kids = (await keys.jwks()).keys.map((k) => k.kid);
    expect(kids).toEqual(expect.arrayContaining([before, rotated.kid]));
    const listed = await keys.list();
    expect(listed.source).toBe('file');
    const previous = listed.keys.find((k) => k.kid === before);
    const current = listed.keys.find((k) => k.kid === rotated.kid);
    expect(previous).toMatchObject({ current: false, retiredAt: expect.any(Number) });
    expect(current).toMatchObject({ current: true, retiredAt: null });
    expect(listed.keys.filter((k) => k.current)).toHaveLength(1);

    // The file keeps both private keys, newest last, still owner-only.
    const stored = JSON.parse(fs.readFileSync(keyFileOf(dataDir), 'utf8')) as {
      keys: Array<{ kid: string }>;
    };
    expect(stored.keys.map((k) => k.kid)).toEqual([before, rotated.kid]);
    expect(fs.statSync(keyFileOf(dataDir)).mode & 0o777).toBe(0o600);
    expect(fs.readdirSync(dataDir)).toEqual(['runtime-keys.json']);
  });

  it('still verifies a lease signed before a rotation, after it', async () => {
    const dataDir = freshDataDir();
    const keys = fileKeys(dataDir);
    const old = await keys.sign(claims('machine-1'));
    await keys.rotate();
    const fresh = await keys.sign(claims('machine-1'));
    expect(fresh.kid).not.toBe(old.kid);
    const jwks = await keys.jwks();
    for (const { token } of [old, fresh]) {
      const verified = await verifyLease(token, { jwks, fingerprint: 'machine-1' });
      expect(verified.fingerprint).toBe('machine-1');
    }
    // A server restarted after the rotation publishes the same keys.
    const restartedJwks = await fileKeys(dataDir).jwks();
    await expect(
      verifyLease(old.token, { jwks: restartedJwks, fingerprint: 'machine-1' }),
    ).resolves.toBeDefined();
  });

  it('takes up a rotation made by another instance sharing DATA_DIR', async () => {
    const dataDir = freshDataDir();
    const one = fileKeys(dataDir);
    const two = fileKeys(dataDir);
    expect(await one.prepare()).toBe(await two.prepare());
    const rotated = await one.rotate();
    expect((await two.sign(claims('fp'))).kid).toBe(rotated.kid);
  });

  it('makes one key when instances sharing DATA_DIR first start at once', async () => {
    const dataDir = freshDataDir();
    const kids = await Promise.all(
      [fileKeys(dataDir), fileKeys(dataDir), fileKeys(dataDir)].map((k) => k.prepare()),
    );
    expect(new Set(kids).size).toBe(1);
    const stored = JSON.parse(fs.readFileSync(keyFileOf(dataDir), 'utf8')) as { keys: unknown[] };
    expect(stored.keys).toHaveLength(1);
    expect(fs.readdirSync(dataDir)).toEqual(['runtime-keys.json']);
  });

  it('refuses a key file it cannot read, naming the file and not its content', async () => {
    const dataDir = freshDataDir();
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(keyFileOf(dataDir), '{"keys":[{"kid":"x","privateJwk":"secret-material"}]}', {
      mode: 0o600,
    });
    const failure = fileKeys(dataDir).prepare();
    await expect(failure).rejects.toThrow(keyFileOf(dataDir));
    await expect(failure).rejects.not.toThrow('secret-material');
  });
});

describe('RUNTIME_SIGNING_KEY', () => {
  const pem = () =>
    generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();

  it('is the one signing key: its thumbprint is the kid, no file is written', async () => {
    const dataDir = freshDataDir();
    const config = loadConfig({ DATA_DIR: dataDir, RUNTIME_SIGNING_KEY: pem() });
    const variable = config.runtimeSigningKey;
    expect(variable).toBeDefined();
    const keys = new RuntimeKeysService(database.db, { variable, dataDir });
    const { token, kid } = await keys.sign(claims('fp'));
    expect(kid).toBe(await thumbprintOf(variable!));
    expect(fs.existsSync(dataDir)).toBe(false);
    await expect(verifyLease(token, { jwks: await keys.jwks(), fingerprint: 'fp' })).resolves.toBeDefined();
    const listed = await keys.list();
    expect(listed.source).toBe('variable');
    expect(listed.keys.find((k) => k.current)?.kid).toBe(kid);
  });

  it('refuses rotation, which the variable manages; a changed variable keeps the old key published', async () => {
    const dataDir = freshDataDir();
    const first = new RuntimeKeysService(database.db, {
      variable: loadConfig({ RUNTIME_SIGNING_KEY: pem() }).runtimeSigningKey,
      dataDir,
    });
    const old = await first.sign(claims('fp'));
    await expect(first.rotate()).rejects.toThrow(RuntimeKeyManagedError);
    await expect(first.rotate()).rejects.toThrow(/RUNTIME_SIGNING_KEY/);

    // The operator sets a new key and restarts.
    const second = new RuntimeKeysService(database.db, {
      variable: loadConfig({ RUNTIME_SIGNING_KEY: pem() }).runtimeSigningKey,
      dataDir,
    });
    const fresh = await second.sign(claims('fp'));
    expect(fresh.kid).not.toBe(old.kid);
    const jwks = await second.jwks();
    await expect(verifyLease(old.token, { jwks, fingerprint: 'fp' })).resolves.toBeDefined();
    await expect(verifyLease(fresh.token, { jwks, fingerprint: 'fp' })).resolves.toBeDefined();
    await expect(verifyLease(old.token, { jwks, fingerprint: 'other' })).rejects.toBeInstanceOf(
      KeywardLeaseError,
    );
  });
});
