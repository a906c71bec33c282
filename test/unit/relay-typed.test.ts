import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import type { PoolGrantClaims, RelayPublicJwk } from '../../src/domain/relay/pool-grant.js';
import { verifyRelaySigned } from '../../src/domain/relay/relay-report.js';
import { relayPublicJwk } from '../../src/domain/relay/relay-lease.js';
import {
  readRelayRequest,
  RELAY_REQUEST_ISSUER,
  RelayRequestError,
  signRelayRequest,
  type RelayRequestClaims,
} from '../../src/domain/relay/relay-request.js';
import { signRelayReturn, unverifiedReturn } from '../../src/domain/relay/relay-return.js';
import {
  grantTokenOfCode,
  isCompactJws,
  peekReturnCode,
  RELAY_CODE_MAX_BYTES,
  RelayCodeError,
  relayGrantCode,
  relayRequestCode,
  relayReturnCode,
  requestTokenOfCode,
  returnTokenOfCode,
  type GrantCodeContext,
} from '../../src/domain/relay/relay-typed.js';
import {
  generateEd25519,
  thumbprintOf,
  type Ed25519PrivateJwk,
} from '../../src/domain/runtime-keys/ed25519.js';
import {
  decodeTyped,
  encodeTyped,
  KeywardLeaseError,
  verifyPoolGrant,
  type JSONWebKeySet,
} from '../../src/keyward-client.js';

// The typed form of the relay exchange: each code rebuilds the very JWS it was made from, whose
// signature then verifies as the file's does; a code that does not read is refused naming why
// (its mistyped group, its kind); a token the reader would not rebuild exactly has no code.

const NOW = Date.UTC(2026, 10, 28, 9);
const NOW_S = NOW / 1000;
const DAY = 86_400;
const FP = 'relay-machine-fp-01';
const RELAY_ID = 'relay_lab-1';

let vendor: Ed25519PrivateJwk;
let vendorKid: string;
let otherVendorKid: string;
let jwks: JSONWebKeySet;
let relayKey: Ed25519PrivateJwk;
let relayJwk: RelayPublicJwk;
let context: GrantCodeContext;

beforeAll(async () => {
  vendor = await generateEd25519();
  vendorKid = await thumbprintOf(vendor);
  const other = await generateEd25519();
  otherVendorKid = await thumbprintOf(other);
  jwks = {
    keys: [
      { kty: 'OKP', crv: 'Ed25519', x: vendor.x, kid: vendorKid },
      { kty: 'OKP', crv: 'Ed25519', x: other.x, kid: otherVendorKid },
    ],
  };
  relayKey = await generateEd25519();
  relayJwk = await relayPublicJwk(relayKey);
  context = {
    relayId: RELAY_ID,
    relayKey: relayJwk,
    fingerprint: FP,
    vendorKids: [otherVendorKid, vendorKid],
  };
});

/** Signed as runtime-keys.service.ts signGrant signs. */
async function signGrant(claims: object, header: Record<string, string> = {}): Promise<string> {
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: vendorKid, typ: 'keyward-grant+jwt', ...header })
    .sign(await importJWK({ ...vendor, alg: 'EdDSA' }, 'EdDSA'));
}

/** In the order relay-grant.service.ts grant() builds them. */
function grantClaims(change: Partial<PoolGrantClaims> = {}): PoolGrantClaims {
  return {
    iss: 'keyward',
    sub: RELAY_ID,
    jti: randomUUID(),
    iat: NOW_S,
    nbf: NOW_S,
    exp: NOW_S + 30 * DAY,
    relay: { key: relayJwk, fingerprint: FP },
    licenses: [{ assetNum: 'KW-000123', crmProductId: 'cad-pro', seats: 10 }],
    machines: null,
    overage: { policy: 'refuse', seats: 0 },
    ...change,
  };
}

/** In the order relay-home.ts initRelay builds them (through relayRequestClaims). */
function requestClaims(change: Partial<RelayRequestClaims> = {}): RelayRequestClaims {
  return {
    iss: RELAY_REQUEST_ISSUER,
    sub: RELAY_ID,
    iat: NOW_S,
    relay: { key: relayJwk, fingerprint: FP },
    asks: {
      licenses: [{ assetNum: 'KW-000123', crmProductId: 'cad-pro', seats: 10 }],
      until: NOW_S + 90 * DAY,
    },
    ...change,
  };
}

async function signedReturn(): Promise<string> {
  return signRelayReturn(
    { iss: RELAY_REQUEST_ISSUER, sub: RELAY_ID, jti: randomUUID(), iat: NOW_S, grant: randomUUID() },
    relayKey,
  );
}

function codeOrFail(code: string | null): string {
  if (code === null) throw new Error('the token has no typed code');
  return code;
}

function refusalOf(read: () => unknown): RelayCodeError {
  let error: unknown;
  try {
    read();
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(RelayCodeError);
  expect(error).toBeInstanceOf(RelayRequestError);
  return error as RelayCodeError;
}

async function grantRefusal(token: string): Promise<KeywardLeaseError> {
  const error = await verifyPoolGrant(token, { jwks, now: new Date(NOW) }).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(KeywardLeaseError);
  return error as KeywardLeaseError;
}

/** A character of the code's group `group` (from 1) replaced by another the alphabet has. */
function mistyped(code: string, group: number): string {
  const at = (group - 1) * 7 + 2;
  const swapped = code[at] === 'Q' ? 'R' : 'Q';
  return code.slice(0, at) + swapped + code.slice(at + 1);
}

describe('the grant code', () => {
  it('rebuilds the very grant, which verifies against the vendor keys', async () => {
    const claims = grantClaims();
    const token = await signGrant(claims);
    const code = codeOrFail(relayGrantCode(token));
    const rebuilt = grantTokenOfCode(code, context);
    expect(rebuilt).toBe(token);
    await expect(verifyPoolGrant(rebuilt, { jwks, now: new Date(NOW) })).resolves.toEqual(claims);
  });

  it('rebuilds several licenses, a machine list and an overage allowed', async () => {
    for (const machines of [['machine-a', 'machine-b-ü'], []]) {
      const token = await signGrant(
        grantClaims({
          licenses: [
            { assetNum: 'KW-000123', crmProductId: 'cad-pro', seats: 10 },
            { assetNum: 'KW-000123', crmProductId: 'cad-viewer', seats: 250 },
            { assetNum: 'KW-987654', crmProductId: 'sim', seats: 1_000_000 },
          ],
          machines,
          overage: { policy: 'allow', seats: 3 },
        }),
      );
      const rebuilt = grantTokenOfCode(codeOrFail(relayGrantCode(token)), context);
      expect(rebuilt).toBe(token);
      await expect(verifyPoolGrant(rebuilt, { jwks, now: new Date(NOW) })).resolves.toMatchObject({
        machines,
        overage: { policy: 'allow', seats: 3 },
      });
    }
  });

  it('rebuilt for another relay key, machine or relay id, is a token whose signature fails', async () => {
    const code = codeOrFail(relayGrantCode(await signGrant(grantClaims())));
    const otherKey = await relayPublicJwk(await generateEd25519());
    for (const other of [
      { ...context, relayKey: otherKey },
      { ...context, fingerprint: 'another-machine-fp' },
      { ...context, relayId: 'relay_lab-2' },
    ]) {
      const error = await grantRefusal(grantTokenOfCode(code, other));
      expect(error.reason).toBe('signature');
    }
  });

  it("names the vendor's key by its first bytes: none or several matching is refused", async () => {
    const code = codeOrFail(relayGrantCode(await signGrant(grantClaims())));
    expect(
      refusalOf(() => grantTokenOfCode(code, { ...context, vendorKids: [otherVendorKid] })).message,
    ).toBe("code: the relay grant code is signed by none of the vendor's keys this relay trusts");
    const twin = `${vendorKid.slice(0, 10)}${vendorKid.slice(10).replace(/./g, 'A')}`;
    expect(
      refusalOf(() => grantTokenOfCode(code, { ...context, vendorKids: [vendorKid, twin] })).message,
    ).toMatch(/could be several of the vendor's keys/);
  });

  it('has none for a grant its reader would not rebuild exactly', async () => {
    const { iss, sub, jti, iat, nbf, exp, relay, licenses, machines, overage } = grantClaims();
    const reordered = { sub, iss, jti, iat, nbf, exp, relay, licenses, machines, overage };
    expect(relayGrantCode(await signGrant(reordered))).toBeNull();
    expect(relayGrantCode(await signGrant({ ...grantClaims(), aud: 'relay' }))).toBeNull();
    expect(relayGrantCode(await signGrant(grantClaims(), { cty: 'JWT' }))).toBeNull();
    expect(relayGrantCode(await signGrant(grantClaims({ nbf: NOW_S + 60 })))).toBeNull();
    expect(relayGrantCode(await signGrant(grantClaims({ jti: 'g-not-a-uuid' })))).toBeNull();
    const anyProduct = grantClaims({ licenses: [{ assetNum: 'KW-1', crmProductId: null, seats: 1 }] });
    expect(relayGrantCode(await signGrant(anyProduct))).toBeNull();
    const relayKeyReordered = { ...grantClaims(), relay: { fingerprint: FP, key: relayJwk } };
    expect(relayGrantCode(await signGrant(relayKeyReordered))).toBeNull();
    expect(relayGrantCode('not.a.token')).toBeNull();
  });

  it(`has none past ${RELAY_CODE_MAX_BYTES} bytes: the file is the way then`, async () => {
    const licenses = Array.from({ length: 20 }, (_, i) => ({
      assetNum: `KW-LONG-ASSET-NUMBER-${String(i).padStart(4, '0')}`,
      crmProductId: 'cad-professional',
      seats: 5,
    }));
    const token = await signGrant(grantClaims({ licenses }));
    expect(relayGrantCode(token)).toBeNull();
    // Fewer of them fit: the limit is the size, not the licenses.
    const fits = await signGrant(grantClaims({ licenses: licenses.slice(0, 5) }));
    expect(grantTokenOfCode(codeOrFail(relayGrantCode(fits)), context)).toBe(fits);
  });
});

describe('the request code', () => {
  it('rebuilds the very request, which the vendor reads as the file', async () => {
    for (const claims of [
      requestClaims(),
      requestClaims({
        asks: {
          licenses: [
            { assetNum: 'KW-000123', crmProductId: null, seats: 4 },
            { assetNum: 'KW-000456', crmProductId: 'cad-pro', seats: 12 },
          ],
          until: NOW_S + 200 * DAY,
        },
      }),
    ]) {
      const token = await signRelayRequest(claims, relayKey);
      const rebuilt = await requestTokenOfCode(codeOrFail(await relayRequestCode(token)));
      expect(rebuilt).toBe(token);
      await expect(readRelayRequest(rebuilt, NOW_S)).resolves.toEqual(claims);
    }
  });

  it('has none for a request its reader would not rebuild exactly', async () => {
    const { iss, sub, iat, relay, asks } = requestClaims();
    const reordered = { sub, iss, iat, relay, asks } as RelayRequestClaims;
    expect(await relayRequestCode(await signRelayRequest(reordered, relayKey))).toBeNull();
    const extra = { ...requestClaims(), jti: 'r-1' } as RelayRequestClaims;
    expect(await relayRequestCode(await signRelayRequest(extra, relayKey))).toBeNull();
  });
});

describe('the return code', () => {
  it('says whose grant it returns, then rebuilds the very return, which verifies', async () => {
    const token = await signedReturn();
    const { claims } = unverifiedReturn(token);
    const code = codeOrFail(relayReturnCode(token));
    expect(peekReturnCode(code)).toEqual({ relayId: RELAY_ID, grantId: claims.grant, returnId: claims.jti });
    const rebuilt = returnTokenOfCode(code, relayJwk.kid);
    expect(rebuilt).toBe(token);
    await expect(verifyRelaySigned(rebuilt, relayJwk, 'return')).resolves.toBeUndefined();
  });

  it('has none for a return whose ids are not UUIDs', async () => {
    const token = await signRelayReturn(
      { iss: RELAY_REQUEST_ISSUER, sub: RELAY_ID, jti: 'return-1', iat: NOW_S, grant: randomUUID() },
      relayKey,
    );
    expect(relayReturnCode(token)).toBeNull();
  });
});

describe('shares of usage limits', () => {
  // A license with a time or amount limit is granted with the relay's share of it (docs/relay.md,
  // "Usage limits"): the codes of version 2 carry the shares, and those of grants without any
  // stay as they were (version 1).
  const shared = [
    { assetNum: 'KW-000123', crmProductId: 'cad-pro', seats: 10, timeSeconds: 36_000 },
    { assetNum: 'KW-000124', crmProductId: 'render', seats: 2, amount: 500 },
    { assetNum: 'KW-000125', crmProductId: 'viewer', seats: 1, timeSeconds: 60, amount: 7 },
    { assetNum: 'KW-000126', crmProductId: 'cad-lite', seats: 3 },
  ];

  it('ride in a request code and a grant code, which rebuild the same tokens', async () => {
    const request = await signRelayRequest(
      requestClaims({ asks: { licenses: shared, until: NOW_S + 90 * DAY } }),
      relayKey,
    );
    const requestCode = codeOrFail(await relayRequestCode(request));
    expect(decodeTyped(requestCode)[1]).toBe(2);
    const rebuilt = await requestTokenOfCode(requestCode);
    expect(rebuilt).toBe(request);
    expect((await readRelayRequest(rebuilt, NOW_S)).asks.licenses).toEqual(shared);

    const grant = await signGrant(grantClaims({ licenses: shared }));
    const grantCode = codeOrFail(relayGrantCode(grant));
    expect(decodeTyped(grantCode)[1]).toBe(2);
    expect(grantTokenOfCode(grantCode, context)).toBe(grant);
    // Without shares, version 1 as before.
    expect(decodeTyped(codeOrFail(relayGrantCode(await signGrant(grantClaims()))))[1]).toBe(1);
  });

  it('ride in a return code as the use the relay gave, zero included', async () => {
    const used = [
      { assetNum: 'KW-000123', crmProductId: 'cad-pro', timeSeconds: 0 },
      { assetNum: 'KW-000125', crmProductId: 'viewer', timeSeconds: 61, amount: 7 },
    ];
    const token = await signRelayReturn(
      { iss: RELAY_REQUEST_ISSUER, sub: RELAY_ID, jti: randomUUID(), iat: NOW_S, grant: randomUUID(), used },
      relayKey,
    );
    const code = codeOrFail(relayReturnCode(token));
    const rebuilt = returnTokenOfCode(code, relayJwk.kid);
    expect(rebuilt).toBe(token);
    expect(unverifiedReturn(rebuilt).claims.used).toEqual(used);
    await expect(verifyRelaySigned(rebuilt, relayJwk, 'return')).resolves.toBeUndefined();
  });

  it('are refused in a request naming the field, and an unknown share flag in a code', async () => {
    const bad = async (license: object) =>
      signRelayRequest(
        requestClaims({
          asks: { licenses: [license as (typeof shared)[number]], until: NOW_S + 90 * DAY },
        }),
        relayKey,
      );
    await expect(readRelayRequest(await bad({ ...shared[0], timeSeconds: 0 }), NOW_S)).rejects.toThrow(
      'asks.licenses[0].timeSeconds: must be a whole number from 1 to 2147483647',
    );
    await expect(readRelayRequest(await bad({ ...shared[1], amount: 1.5 }), NOW_S)).rejects.toThrow(
      'asks.licenses[0].amount: must be a whole number from 1 to 2147483647',
    );
    const bytes = decodeTyped(
      codeOrFail(
        relayGrantCode(await signGrant(grantClaims({ licenses: [shared[1] as (typeof shared)[number]] }))),
      ),
    );
    // The flags byte follows the first license's seats: kind, version, kid prefix, uuid, two
    // times, count, then the license's texts and seats.
    const flagsAt = 2 + 4 + 16 + 4 + 4 + 1 + (1 + 9) + (1 + 6) + 4;
    expect(bytes[flagsAt]).toBe(2);
    const strange = Uint8Array.from(bytes);
    strange[flagsAt] = 4;
    expect(refusalOf(() => grantTokenOfCode(encodeTyped(strange), context)).message).toBe(
      'code: the relay grant code names an unknown share of a license',
    );
  });
});

describe('a code that does not read', () => {
  it('is refused naming its mistyped group', async () => {
    const code = codeOrFail(relayGrantCode(await signGrant(grantClaims())));
    const error = refusalOf(() => grantTokenOfCode(mistyped(code, 3), context));
    expect(error.message).toBe('code: group 3 does not check: a character in it is mistyped');
    expect(error.group).toBe(3);
    const returned = codeOrFail(relayReturnCode(await signedReturn()));
    expect(refusalOf(() => peekReturnCode(mistyped(returned, 7))).group).toBe(7);
  });

  it('of another kind is refused naming what it is', async () => {
    const request = codeOrFail(await relayRequestCode(await signRelayRequest(requestClaims(), relayKey)));
    expect(refusalOf(() => grantTokenOfCode(request, context)).message).toBe(
      'code: this is a relay request code, not a relay grant code',
    );
    const grant = codeOrFail(relayGrantCode(await signGrant(grantClaims())));
    expect(refusalOf(() => peekReturnCode(grant)).message).toBe(
      'code: this is a relay grant code, not a relay return code',
    );
    await expect(requestTokenOfCode(grant)).rejects.toThrow(
      'code: this is a relay grant code, not a relay request code',
    );
    const activation = encodeTyped(Uint8Array.from([0x52, 1, 0, 30]));
    expect(refusalOf(() => grantTokenOfCode(activation, context)).message).toBe(
      'code: this is an activation request code, not a relay grant code',
    );
  });

  it('is refused cut short, with bytes too many, or of another version', async () => {
    const bytes = decodeTyped(codeOrFail(relayGrantCode(await signGrant(grantClaims()))));
    expect(refusalOf(() => grantTokenOfCode(encodeTyped(bytes.slice(0, -10)), context)).message).toBe(
      'code: the relay grant code is cut short: its signature is missing',
    );
    const longer = Uint8Array.from([...bytes, 0, 0]);
    expect(refusalOf(() => grantTokenOfCode(encodeTyped(longer), context)).message).toBe(
      'code: the relay grant code has 2 bytes too many',
    );
    const next = Uint8Array.from(bytes);
    next[1] = 3;
    expect(refusalOf(() => grantTokenOfCode(encodeTyped(next), context)).message).toBe(
      'code: this relay grant code is of version 3; this reads versions 1 and 2',
    );
    expect(refusalOf(() => grantTokenOfCode('', context)).message).toBe('code: the code is empty');
  });
});

describe('a typed code', () => {
  it('forgives case, missing dashes and spaces', async () => {
    const token = await signGrant(grantClaims());
    const code = codeOrFail(relayGrantCode(token));
    const loose = code
      .toLowerCase()
      .replace(/-/g, '')
      .replace(/(.{12})/g, '$1 ');
    expect(grantTokenOfCode(loose, context)).toBe(token);
  });

  it('is told from a JWS', async () => {
    const token = await signedReturn();
    expect(isCompactJws(token)).toBe(true);
    expect(isCompactJws(`  ${token}\n`)).toBe(true);
    expect(isCompactJws(codeOrFail(relayReturnCode(token)))).toBe(false);
    expect(isCompactJws('a.b')).toBe(false);
  });

  it('of one license each is as long as its bytes say', async () => {
    const grant = codeOrFail(relayGrantCode(await signGrant(grantClaims())));
    const request = codeOrFail(await relayRequestCode(await signRelayRequest(requestClaims(), relayKey)));
    const returned = codeOrFail(relayReturnCode(await signedReturn()));
    // Written down in the report of this change: the signature (64 bytes) is most of each.
    console.info(
      `typed code lengths: grant ${grant.length}, request ${request.length}, return ${returned.length}`,
    );
    // 123, 161 and 114 bytes: 8 bits in 5 a character, and a check character and a dash each five.
    expect([grant.length, request.length, returned.length]).toEqual([276, 361, 256]);
  });
});
