import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateEd25519,
  thumbprintOf,
  type Ed25519PrivateJwk,
} from '../../src/domain/runtime-keys/ed25519.js';
import {
  initRelay,
  machineFingerprint,
  RELAY_FILES,
  RelayHomeError,
} from '../../src/domain/relay/relay-home.js';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import {
  readRelayRequest,
  RELAY_REQUEST_ISSUER,
  RelayRequestError,
  signRelayRequest,
  type RelayRequestClaims,
} from '../../src/domain/relay/relay-request.js';

// A relay request (`keyward relay init`) is signed by the key it names: the vendor reads it and
// refuses a changed, re-keyed, stale or malformed one, naming the field. The relay's directory
// keeps its id and key across inits on one machine (renewal), and refuses another machine.

const NOW = Date.UTC(2026, 10, 28, 9);
const NOW_S = NOW / 1000;
const DAY = 86_400;
let scratch: string;
let vendorJwks: string;
let relayKey: Ed25519PrivateJwk;

async function claimsFor(
  key: Ed25519PrivateJwk,
  change: Partial<RelayRequestClaims> = {},
): Promise<RelayRequestClaims> {
  return {
    iss: RELAY_REQUEST_ISSUER,
    sub: 'relay_lab-1',
    iat: NOW_S,
    relay: { key: await relayPublicJwk(key), fingerprint: 'fp-of-the-relay-machine' },
    asks: {
      licenses: [{ assetNum: 'KW-000123', crmProductId: 'cad-pro', seats: 10 }],
      until: NOW_S + 90 * DAY,
    },
    ...change,
  };
}

/** A compact JWS with its payload replaced, the header and signature kept. */
function withPayload(token: string, payload: unknown): string {
  const [header, , signature] = token.split('.');
  return `${header}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${signature}`;
}

async function refusal(token: string, now = NOW_S): Promise<string> {
  const error = await readRelayRequest(token, now).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RelayRequestError);
  return (error as Error).message;
}

beforeAll(async () => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-relay-'));
  relayKey = await generateEd25519();
  const vendor = await generateEd25519();
  vendorJwks = path.join(scratch, 'vendor-jwks.json');
  const { d: _secret, ...vendorPublic } = vendor;
  fs.writeFileSync(
    vendorJwks,
    JSON.stringify({ keys: [{ ...vendorPublic, kid: await thumbprintOf(vendor) }] }),
  );
});
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }));

describe('a relay request', () => {
  it('is read back as the relay signed it', async () => {
    const claims = await claimsFor(relayKey);
    expect(await readRelayRequest(await signRelayRequest(claims, relayKey), NOW_S)).toEqual(claims);
  });

  it('is refused when its asks were changed after signing', async () => {
    const claims = await claimsFor(relayKey);
    const token = await signRelayRequest(claims, relayKey);
    const more = {
      ...claims,
      asks: { ...claims.asks, licenses: [{ ...claims.asks.licenses[0], seats: 1000 }] },
    };
    expect(await refusal(withPayload(token, more))).toMatch(/signature/);
  });

  it("is refused when another key was put in it, or its kid is not the key's thumbprint", async () => {
    const claims = await claimsFor(relayKey);
    const token = await signRelayRequest(claims, relayKey);
    const other = await generateEd25519();
    const swapped = { ...claims, relay: { ...claims.relay, key: await relayPublicJwk(other) } };
    expect(await refusal(withPayload(token, swapped))).toMatch(/another key|signature/);
    const badKid = {
      ...claims,
      relay: { ...claims.relay, key: { ...claims.relay.key, kid: 'A'.repeat(43) } },
    };
    expect(await refusal(withPayload(token, badKid))).toMatch(/^relay\.key\.kid/);
  });

  it('is refused when stale, dated ahead, or asking for a passed or too distant end', async () => {
    const token = await signRelayRequest(await claimsFor(relayKey), relayKey);
    expect(await refusal(token, NOW_S + 31 * DAY)).toMatch(/^iat: .*30 days/);
    expect(await refusal(token, NOW_S - 2 * DAY)).toMatch(/^iat: .*future/);
    const passed = await signRelayRequest(
      await claimsFor(relayKey, {
        asks: { licenses: [{ assetNum: 'A', crmProductId: null, seats: 1 }], until: NOW_S - 1 },
      }),
      relayKey,
    );
    expect(await refusal(passed)).toMatch(/^asks\.until: has passed/);
    const distant = await signRelayRequest(
      await claimsFor(relayKey, {
        asks: { licenses: [{ assetNum: 'A', crmProductId: null, seats: 1 }], until: NOW_S + 400 * DAY },
      }),
      relayKey,
    );
    expect(await refusal(distant)).toMatch(/^asks\.until: is more than 366 days ahead/);
  });

  it('names the field of a malformed ask', async () => {
    const cases: Array<[unknown, RegExp]> = [
      [[], /^asks\.licenses: must list 1 to 100/],
      [[{ assetNum: '', crmProductId: null, seats: 1 }], /^asks\.licenses\[0\]\.assetNum/],
      [[{ assetNum: 'A', crmProductId: null, seats: 0 }], /^asks\.licenses\[0\]\.seats/],
      [[{ assetNum: 'A', crmProductId: null, seats: 1.5 }], /^asks\.licenses\[0\]\.seats/],
      [[{ assetNum: 'A', crmProductId: 7, seats: 1 }], /^asks\.licenses\[0\]\.crmProductId/],
      [
        [
          { assetNum: 'A', crmProductId: null, seats: 1 },
          { assetNum: 'A', crmProductId: null, seats: 2 },
        ],
        /^asks\.licenses\[1\]: asks for the same license/,
      ],
    ];
    for (const [licenses, message] of cases) {
      const claims = { ...(await claimsFor(relayKey)), asks: { licenses, until: NOW_S + DAY } };
      // Signed by hand: the relay's own signer checks nothing, the reader checks everything.
      const token = await signRelayRequest(claims as RelayRequestClaims, relayKey);
      expect(await refusal(token)).toMatch(message);
    }
  });

  it('is refused when it is not a relay request at all', async () => {
    expect(await refusal('')).toMatch(/^request: is empty/);
    expect(await refusal('not a token')).toMatch(/^request: is not a relay request/);
    expect(await refusal('x'.repeat(70_000))).toMatch(/^request: is longer/);
  });
});

describe("a relay's directory", () => {
  const asks = {
    licenses: [{ assetNum: 'KW-000123', crmProductId: null, seats: 10 }],
    until: NOW_S + 30 * DAY,
  };

  it('is made once with its key readable by its owner alone, and kept by the next init on the same machine', async () => {
    const dir = path.join(scratch, 'home');
    const vendor = { text: fs.readFileSync(vendorJwks, 'utf8'), source: vendorJwks };
    const first = await initRelay({
      dir,
      vendorJwks: vendor,
      fingerprint: 'machine-fp-0001',
      asks,
      now: NOW,
    });
    expect(first.made).toBe(true);
    for (const name of [RELAY_FILES.key, RELAY_FILES.identity, RELAY_FILES.vendorJwks]) {
      expect(fs.statSync(path.join(dir, name)).mode & 0o077, name).toBe(0);
    }
    expect(fs.readFileSync(path.join(dir, RELAY_FILES.vendorJwks), 'utf8')).not.toContain('"d"');
    const read = await readRelayRequest(first.request, NOW_S);
    expect(read.sub).toBe(first.identity.relayId);
    expect(read.relay.fingerprint).toBe('machine-fp-0001');

    const again = await initRelay({ dir, fingerprint: 'machine-fp-0001', asks, now: NOW + 1000 });
    expect(again.made).toBe(false);
    expect(again.identity.relayId).toBe(first.identity.relayId);
    expect((await readRelayRequest(again.request, NOW_S)).relay.key).toEqual(read.relay.key);

    await expect(initRelay({ dir, fingerprint: 'another-machine-01', asks, now: NOW })).rejects.toThrow(
      /made on another machine/,
    );
  });

  it("refuses to start without the vendor's keys, or with a private key among them", async () => {
    const dir = path.join(scratch, 'no-vendor');
    await expect(initRelay({ dir, fingerprint: 'machine-fp-0002', asks, now: NOW })).rejects.toThrow(
      RelayHomeError,
    );
    const privateSet = JSON.stringify({ keys: [{ ...(await generateEd25519()), kid: 'k' }] });
    await expect(
      initRelay({
        dir,
        vendorJwks: { text: privateSet, source: 'x.json' },
        fingerprint: 'machine-fp-0002',
        asks,
        now: NOW,
      }),
    ).rejects.toThrow(/private key/);
    expect(fs.existsSync(path.join(dir, RELAY_FILES.identity))).toBe(false);
  });

  it("takes the machine's fingerprint from its machine id, hashed, and says what to do without one", () => {
    const idFile = path.join(scratch, 'machine-id');
    fs.writeFileSync(idFile, '0123456789abcdef0123456789abcdef\n');
    const fp = machineFingerprint([idFile]);
    expect(fp).toMatch(/^[A-Za-z0-9_-]{32}$/);
    expect(fp).not.toContain('0123456789abcdef');
    expect(machineFingerprint([path.join(scratch, 'absent'), idFile])).toBe(fp);
    expect(() => machineFingerprint([path.join(scratch, 'absent')])).toThrow(/--fingerprint/);
  });
});
