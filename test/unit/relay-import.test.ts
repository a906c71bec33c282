import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PoolGrantClaims } from '../../src/domain/relay/pool-grant.js';
import { initRelay, RELAY_FILES, RelayHomeError } from '../../src/domain/relay/relay-home.js';
import {
  CLOCK_TOLERANCE_MS,
  importGrant,
  RELAY_STATE_FILES,
  relayStatus,
} from '../../src/domain/relay/relay-import.js';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import {
  generateEd25519,
  thumbprintOf,
  type Ed25519PrivateJwk,
} from '../../src/domain/runtime-keys/ed25519.js';

// `keyward relay import`: the vendor's grant is kept only when it verifies against the vendor keys
// pinned at init, is for this relay, its key and its machine, and is not older than the one held;
// a clock set back is refused until corrected. Each refusal is written to the relay's audit trail.

const NOW = Date.UTC(2026, 10, 28, 9);
const NOW_S = NOW / 1000;
const FP = 'relay-machine-fp-01';
let scratch: string;
let vendor: Ed25519PrivateJwk;
let vendorKid: string;
let dir: string;
let relayId: string;
let relayKey: Ed25519PrivateJwk;

async function signGrant(claims: PoolGrantClaims, key = vendor, kid = vendorKid): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid, typ: 'keyward-grant+jwt' })
    .sign(await importJWK({ ...key, alg: 'EdDSA' }, 'EdDSA'));
}

async function claims(change: Partial<PoolGrantClaims> = {}): Promise<PoolGrantClaims> {
  return {
    iss: 'keyward',
    sub: relayId,
    jti: `g-${Math.random().toString(36).slice(2)}`,
    iat: NOW_S,
    nbf: NOW_S,
    exp: NOW_S + 30 * 86_400,
    relay: { key: await relayPublicJwk(relayKey), fingerprint: FP },
    licenses: [{ assetNum: 'KW-000123', crmProductId: null, seats: 10 }],
    machines: null,
    overage: { policy: 'refuse', seats: 0 },
    ...change,
  };
}

async function refusal(grant: string, now = NOW, fingerprint = FP): Promise<string> {
  const error = await importGrant({ dir, grant, now, fingerprint }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RelayHomeError);
  return (error as Error).message;
}

function auditEvents(): string[] {
  return fs
    .readFileSync(path.join(dir, RELAY_STATE_FILES.audit), 'utf8')
    .trim()
    .split('\n')
    .map((line) => (JSON.parse(line) as { event: string }).event);
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-import-'));
  vendor = await generateEd25519();
  vendorKid = await thumbprintOf(vendor);
  dir = path.join(scratch, 'relay');
  const made = await initRelay({
    dir,
    vendorJwks: {
      text: JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: vendor.x, kid: vendorKid }] }),
      source: 'vendor-jwks.json',
    },
    fingerprint: FP,
    asks: {
      licenses: [{ assetNum: 'KW-000123', crmProductId: null, seats: 10 }],
      until: NOW_S + 30 * 86_400,
    },
    now: NOW,
  });
  relayId = made.identity.relayId;
  relayKey = JSON.parse(fs.readFileSync(path.join(dir, RELAY_FILES.key), 'utf8')) as Ed25519PrivateJwk;
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('importing a grant', () => {
  it('keeps a grant made for this relay, once', async () => {
    const grant = await signGrant(await claims());
    const first = await importGrant({ dir, grant, now: NOW, fingerprint: FP });
    expect(first.imported).toBe(true);
    expect(fs.readFileSync(path.join(dir, RELAY_STATE_FILES.grant), 'utf8').trim()).toBe(grant);
    expect(fs.statSync(path.join(dir, RELAY_STATE_FILES.grant)).mode & 0o077).toBe(0);
    const again = await importGrant({ dir, grant, now: NOW + 1000, fingerprint: FP });
    expect(again.imported).toBe(false);
  });

  it('refuses a grant of another vendor, a changed one, and one that ended', async () => {
    const stranger = await generateEd25519();
    expect(await refusal(await signGrant(await claims(), stranger, await thumbprintOf(stranger)))).toMatch(
      /\(unknown-key\)/,
    );
    // The vendor's kid on a stranger's signature.
    expect(await refusal(await signGrant(await claims(), stranger, vendorKid))).toMatch(/\(signature\)/);
    const [header, , signature] = (await signGrant(await claims())).split('.');
    const more = Buffer.from(
      JSON.stringify(await claims({ licenses: [{ assetNum: 'KW-000123', crmProductId: null, seats: 999 }] })),
    ).toString('base64url');
    expect(await refusal(`${header}.${more}.${signature}`)).toMatch(/\(signature\)/);
    expect(
      await refusal(await signGrant(await claims({ exp: NOW_S - 1, nbf: NOW_S - 100, iat: NOW_S - 100 }))),
    ).toMatch(/\(grant-expired\)/);
  });

  it("refuses another relay's grant, one certifying another key, and one naming another machine", async () => {
    expect(await refusal(await signGrant(await claims({ sub: 'relay_someone-else' })))).toMatch(
      /is for relay relay_someone-else/,
    );
    const otherKey = await relayPublicJwk(await generateEd25519());
    expect(
      await refusal(await signGrant(await claims({ relay: { key: otherKey, fingerprint: FP } }))),
    ).toMatch(/another key/);
    const elsewhere = await claims();
    elsewhere.relay = { ...elsewhere.relay, fingerprint: 'another-machine-fp' };
    expect(await refusal(await signGrant(elsewhere))).toMatch(/names another machine/);
    // On another machine the directory itself is refused, before any grant is read.
    expect(await refusal(await signGrant(await claims()), NOW, 'another-machine-fp')).toMatch(
      /another machine/,
    );
  });

  it('refuses an older grant than the one it holds, a replay that would give back dropped seats', async () => {
    const newer = await signGrant(await claims({ iat: NOW_S + 60, nbf: NOW_S + 60 }));
    expect((await importGrant({ dir, grant: newer, now: NOW + 120_000, fingerprint: FP })).imported).toBe(
      true,
    );
    expect(await refusal(await signGrant(await claims()), NOW + 120_000)).toMatch(
      /older than the grant this relay holds/,
    );
  });

  it('keeps the grant a renewal replaces, for the relay to return, and not one replaced again before then', async () => {
    const superseded = path.join(dir, RELAY_STATE_FILES.superseded);
    fs.rmSync(superseded, { force: true });
    const held = fs.readFileSync(path.join(dir, RELAY_STATE_FILES.grant), 'utf8');
    const renewal = await signGrant(await claims({ iat: NOW_S + 120, nbf: NOW_S + 120 }));
    expect((await importGrant({ dir, grant: renewal, now: NOW + 180_000, fingerprint: FP })).imported).toBe(
      true,
    );
    expect(fs.readFileSync(superseded, 'utf8')).toBe(held);
    expect(fs.statSync(superseded).mode & 0o077).toBe(0);
    // A second renewal before the relay served the first: the relay's database still serves the
    // grant first replaced, which is the one to return.
    const again = await signGrant(await claims({ iat: NOW_S + 180, nbf: NOW_S + 180 }));
    expect((await importGrant({ dir, grant: again, now: NOW + 240_000, fingerprint: FP })).imported).toBe(
      true,
    );
    expect(fs.readFileSync(superseded, 'utf8')).toBe(held);
  });

  it('refuses while the clock reads before what the relay has seen, audited, and imports once corrected', async () => {
    const grant = await signGrant(await claims({ iat: NOW_S + 200, nbf: NOW_S - 10 }));
    const seen = NOW + 120_000;
    expect(await refusal(grant, seen - CLOCK_TOLERANCE_MS - 60_000)).toMatch(/correct the clock/);
    expect(auditEvents()).toContain('clock.behind');
    expect((await importGrant({ dir, grant, now: seen - 60_000, fingerprint: FP })).imported).toBe(true);
    expect(auditEvents()).toEqual(
      expect.arrayContaining(['grant.imported', 'grant.refused', 'clock.behind']),
    );
  });

  it('shows the grant it holds, whether it ended, and whether this is its machine', async () => {
    const state = relayStatus(dir, NOW + 1000, FP);
    expect(state).toMatchObject({ relayId, fingerprint: FP, thisMachine: true, vendorKeys: 1 });
    expect(state.grant?.ended).toBe(false);
    expect(state.grant?.licenses).toEqual([{ assetNum: 'KW-000123', crmProductId: null, seats: 10 }]);
    expect(state.clockSeen).toBeGreaterThanOrEqual(NOW);
    const later = relayStatus(dir, NOW + 31 * 86_400_000, 'another-machine-fp');
    expect(later).toMatchObject({ thisMachine: false, grant: { ended: true } });
  });
});
