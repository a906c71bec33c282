import { createPrivateKey, sign as signBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { decodeJwt, importJWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LEASE_TYP,
  verifyWebhook,
  type JSONWebKeySet,
  type LeaseFailure,
  type OfflineLeaseClaims,
} from '@keyward/client';
import { eventBody } from '../../src/domain/webhooks/delivery.service.js';
import { signatureHeader } from '../../src/domain/webhooks/secrets.js';
import { leaseOf, lockWith, runtimeWorld, fingerprint } from '../http/runtime-helpers.js';
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

// The offline half of the SDK conformance suite: sdks/conformance/leases.json and webhooks.json,
// made here by the server's own signing code and checked against the TypeScript client. Every SDK
// runs every case (sdks/conformance/README.md); a case added here fails each SDK that does not
// handle it. The files are committed: this test fails when they differ from what it makes, and
// `KEYWARD_WRITE_VECTORS=1 npx vitest run test/sdk/conformance-vectors.test.ts` rewrites them.

const DIR = path.resolve(import.meta.dirname, '../../sdks/conformance');
const WRITE = process.env.KEYWARD_WRITE_VECTORS === '1';

/** Signed as RuntimeKeysService.sign signs: EdDSA, the key's thumbprint as kid, typ keyward-lease+jwt. */
async function sign(claims: object, name: KeyName = 'A', header: { typ?: string } = {}): Promise<string> {
  const key = await importJWK(KEYS[name], 'EdDSA');
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: 'EdDSA', kid: await kidOf(name), typ: header.typ ?? LEASE_TYP })
    .sign(key);
}

const b64url = (value: object | string) =>
  Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

/** A segment of a compact JWS: the unpadded base64url of these bytes (a string as UTF-8). */
const segment = (bytes: string | Uint8Array) => Buffer.from(bytes).toString('base64url');

/** Ed25519 by a key of this suite over the signing input exactly as it stands, whatever it holds. */
function signature(signingInput: string, name: KeyName = 'A'): Buffer {
  return signBytes(
    null,
    Buffer.from(signingInput, 'latin1'),
    createPrivateKey({ key: KEYS[name], format: 'jwk' }),
  );
}

/**
 * A compact JWS of these two segments as written (padding, whitespace and all), signed over them
 * as written: what only the holder of a signing key can make, so its one defect is its form.
 */
function signedAsWritten(header: string, payload: string, name: KeyName = 'A'): string {
  return `${header}.${payload}.${segment(signature(`${header}.${payload}`, name))}`;
}

/** The claims as JSON text with one member's value written as given (a number JSON.stringify would
 *  not write so, a NaN…). */
function withRawValue(claims: object, member: string, raw: string): string {
  const text = JSON.stringify({ ...claims, [member]: 'raw-value-here' });
  if (!text.includes('"raw-value-here"')) throw new Error('no marker in the claims');
  return text.replace('"raw-value-here"', raw);
}

/** The base64url text's last character with its unused low bits set: the same bytes to a lenient
 *  decoder, no encoding of any bytes to a strict one (RFC 4648 §3.5). */
function withUnusedBitsSet(text: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const spare = { 2: 0b1111, 3: 0b11 }[text.length % 4];
  if (spare === undefined) throw new Error(`a segment of ${text.length} characters has no unused bits`);
  const last = alphabet.indexOf(text.slice(-1));
  return text.slice(0, -1) + alphabet.charAt(last | spare);
}

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
  const basic: LeaseCase[] = [
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
      description:
        'signed by a key retired by a rotation: the server publishes every key that ever signed, a retired one ' +
        'too, with no mark (a retired key stops signing; its leases run to their exp)',
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
  return [...basic, ...(await edgeCases(claims, token))];
}

/**
 * The cases only a holder of a signing key can make, where verifiers were seen to disagree (issue
 * 40), and their neighbours: the compact form (whitespace, padding, alphabet, unused bits, segments),
 * the JSON (duplicate names, a byte order mark, bytes that are no UTF-8), `crit`, the `kid`, the
 * time claims' types and range, and the other claims' types. Each has one defect; every one but the
 * `valid-…` ones is refused with the reason of the first check it fails (sdks/conformance/README.md).
 */
async function edgeCases(claims: OfflineLeaseClaims, token: string): Promise<LeaseCase[]> {
  const base = { fingerprint: FINGERPRINT, audience: AUDIENCE, now: NOW };
  const kidA = await kidOf('A');
  const headerOf = (fields: object) => JSON.stringify({ alg: 'EdDSA', kid: kidA, typ: LEASE_TYP, ...fields });
  const H = segment(headerOf({}));
  const P = segment(JSON.stringify(claims));
  const [, , S] = token.split('.') as [string, string, string];
  if (`${H}.${P}` !== token.split('.').slice(0, 2).join('.'))
    throw new Error('the header or payload differ from jose’s');
  const malformed = { valid: false, reason: 'malformed' } as const;
  const refused = (reason: LeaseFailure) => ({ valid: false, reason }) as const;
  /** A valid lease's payload as JSON text with `insert` put first in the object named by `at`. */
  const inserted = (insert: string, at = '{') => {
    const text = JSON.stringify(claims);
    if (!text.includes(at)) throw new Error(`no ${at} in the claims`);
    return segment(text.replace(at, `${at}${insert},`));
  };
  const withTime = (member: 'iat' | 'nbf' | 'exp', raw: string) => segment(withRawValue(claims, member, raw));
  const padding = (text: string) => {
    const pad = '='.repeat((4 - (text.length % 4)) % 4);
    if (pad === '') throw new Error('a segment that needs no padding');
    return text + pad;
  };
  // A payload whose standard base64 has a '+' or '/': the product's name grown until it does.
  let standard = '';
  for (let extra = 0; standard === ''; extra++) {
    if (extra > 8) throw new Error('no payload with a + or / in base64');
    const text = JSON.stringify({
      ...claims,
      product: { ...claims.product, productName: `Modeler ${'~'.repeat(extra)}` },
    });
    const encoded = Buffer.from(text).toString('base64').replace(/=+$/, '');
    if (/[+/]/.test(encoded)) standard = encoded;
  }
  const standardSignature = S.replace(/-/g, '+').replace(/_/g, '/');
  if (standardSignature === S) throw new Error('the signature has no - or _');
  const json = JSON.stringify(claims);
  /** The text's UTF-8 with these bytes put after `after`. */
  const withBytes = (text: string, after: string, bytes: number[]) => {
    const at = text.indexOf(after) + after.length;
    return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]);
  };
  const notUtf8 = withBytes(json, 'Modeler', [0xff, 0xfe]);
  const timeCase = (
    name: string,
    description: string,
    member: 'iat' | 'nbf' | 'exp',
    raw: string,
    expect: LeaseExpectation = malformed,
  ): LeaseCase => ({ name, description, token: signedAsWritten(H, withTime(member, raw)), ...base, expect });
  const { d: _private, ...publicC } = KEYS.C;

  return [
    // The compact form: three segments, each exactly the unpadded base64url of its bytes.
    {
      name: 'space-before-token',
      description: 'a space before the header, signed as written',
      token: signedAsWritten(` ${H}`, P),
      ...base,
      expect: malformed,
    },
    {
      name: 'space-after-token',
      description: 'a space after the signature',
      token: `${token} `,
      ...base,
      expect: malformed,
    },
    {
      name: 'newline-after-token',
      description: 'a newline after the signature, as a file read whole holds it',
      token: `${token}\n`,
      ...base,
      expect: malformed,
    },
    {
      name: 'crlf-inside-payload',
      description: 'a CR LF in the middle of the payload segment, signed as written (Go’s base64 skips it)',
      token: signedAsWritten(H, `${P.slice(0, 100)}\r\n${P.slice(100)}`),
      ...base,
      expect: malformed,
    },
    {
      name: 'space-after-dot',
      description: 'a space after the first dot, signed as written',
      token: signedAsWritten(H, ` ${P}`),
      ...base,
      expect: malformed,
    },
    {
      name: 'newline-inside-signature',
      description: 'a newline in the middle of the signature segment',
      token: `${H}.${P}.${S.slice(0, 40)}\n${S.slice(40)}`,
      ...base,
      expect: malformed,
    },
    {
      name: 'padded-header',
      description: 'the header (one JSON space longer, so it needs padding) padded with =, signed as written',
      token: signedAsWritten(padding(segment(`{ ${headerOf({}).slice(1)}`)), P),
      ...base,
      expect: malformed,
    },
    {
      name: 'padded-payload',
      description: 'the payload segment padded with =, signed as written',
      token: signedAsWritten(H, padding(P)),
      ...base,
      expect: malformed,
    },
    {
      name: 'padded-signature',
      description: 'the signature segment padded with ==',
      token: `${token}==`,
      ...base,
      expect: malformed,
    },
    {
      name: 'standard-alphabet-payload',
      description: 'the payload in standard base64 (with + or /, unpadded), signed as written',
      token: signedAsWritten(H, standard),
      ...base,
      expect: malformed,
    },
    {
      name: 'standard-alphabet-signature',
      description: 'the signature in standard base64: - and _ written + and /',
      token: `${H}.${P}.${standardSignature}`,
      ...base,
      expect: malformed,
    },
    {
      name: 'non-canonical-signature',
      description:
        'the signature’s last character with its unused bits set: the same 64 bytes to a lenient decoder',
      token: `${H}.${P}.${withUnusedBitsSet(S)}`,
      ...base,
      expect: malformed,
    },
    {
      name: 'non-canonical-payload',
      description: 'the payload’s last character with its unused bits set, signed as written',
      token: signedAsWritten(H, withUnusedBitsSet(P)),
      ...base,
      expect: malformed,
    },
    {
      name: 'two-segments',
      description: 'the header and the payload, no signature segment',
      token: `${H}.${P}`,
      ...base,
      expect: malformed,
    },
    {
      name: 'four-segments',
      description: 'a fourth segment after the signature',
      token: `${token}.${S}`,
      ...base,
      expect: malformed,
    },
    {
      name: 'empty-signature',
      description: 'alg EdDSA and an empty signature segment',
      token: `${H}.${P}.`,
      ...base,
      expect: refused('signature'),
    },
    {
      name: 'truncated-signature',
      description: 'the signature’s first 63 bytes, well encoded',
      token: `${H}.${P}.${segment(Buffer.from(S, 'base64url').subarray(0, 63))}`,
      ...base,
      expect: refused('signature'),
    },
    // The JSON: an object, UTF-8, each name once.
    {
      name: 'leading-zero-in-number',
      description: 'exp written 01800604800: a leading zero is no JSON number',
      token: signedAsWritten(H, withTime('exp', `0${claims.exp}`)),
      ...base,
      expect: malformed,
    },
    {
      name: 'number-ending-in-a-dot',
      description: 'exp written 1800604800. : a fraction with no digit is no JSON number',
      token: signedAsWritten(H, withTime('exp', `${claims.exp}.`)),
      ...base,
      expect: malformed,
    },
    {
      name: 'control-character-in-string',
      description: 'a raw tab inside the product’s name: JSON escapes control characters',
      token: signedAsWritten(H, segment(json.replace('Modeler', 'Mod\teler'))),
      ...base,
      expect: malformed,
    },
    {
      name: 'valid-header-with-json-whitespace',
      description: 'the header JSON indented over several lines: whitespace inside JSON is JSON',
      token: signedAsWritten(
        segment(JSON.stringify({ alg: 'EdDSA', kid: kidA, typ: LEASE_TYP }, null, 2)),
        P,
      ),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'payload-with-byte-order-mark',
      description: 'the payload’s JSON after a UTF-8 byte order mark',
      token: signedAsWritten(H, segment(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]))),
      ...base,
      expect: malformed,
    },
    {
      name: 'payload-not-utf8',
      description: 'the bytes FF FE inside the product’s name: no UTF-8',
      token: signedAsWritten(H, segment(notUtf8)),
      ...base,
      expect: malformed,
    },
    {
      name: 'payload-overlong-utf8',
      description: 'C0 AF inside the product’s name: "/" in two bytes, which UTF-8 forbids',
      token: signedAsWritten(H, segment(withBytes(json, 'Modeler', [0xc0, 0xaf]))),
      ...base,
      expect: malformed,
    },
    {
      name: 'payload-utf8-surrogate',
      description: 'ED A0 80 inside the product’s name: a UTF-16 surrogate, which UTF-8 cannot encode',
      token: signedAsWritten(H, segment(withBytes(json, 'Modeler', [0xed, 0xa0, 0x80]))),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-kid-in-header',
      description: 'kid twice: first a key the set does not hold, then the key that signed',
      token: signedAsWritten(
        segment(
          `{"alg":"EdDSA","kid":${JSON.stringify(await kidOf('C'))},"kid":${JSON.stringify(kidA)},"typ":"${LEASE_TYP}"}`,
        ),
        P,
      ),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-typ-in-header',
      description: 'typ twice: first JWT, then keyward-lease+jwt',
      token: signedAsWritten(
        segment(`{"alg":"EdDSA","kid":${JSON.stringify(kidA)},"typ":"JWT","typ":"${LEASE_TYP}"}`),
        P,
      ),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-sub',
      description: 'sub twice: another lease’s id, then this one’s',
      token: signedAsWritten(H, inserted('"sub":"01938f2e-7c1a-7000-8000-000000000002"')),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-exp',
      description: 'exp twice: a minute ago, then in seven days',
      token: signedAsWritten(H, inserted(`"exp":${NOW - 60}`)),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-fingerprint',
      description: 'fingerprint twice: another machine’s, then this one’s',
      token: signedAsWritten(H, inserted('"fingerprint":"fp-conformance-another-machine"')),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-in-nested-object',
      description: 'limits.endDate twice: yesterday, then in sixty days',
      token: signedAsWritten(H, inserted(`"endDate":${(NOW - DAY) * 1000}`, '"limits":{')),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-with-the-same-value',
      description: 'iss twice, keyward both times: a name given twice is malformed whatever its values',
      token: signedAsWritten(H, inserted('"iss":"keyward"')),
      ...base,
      expect: malformed,
    },
    {
      name: 'duplicate-name-escaped',
      description: 'sub twice, the first written s\\u0075b: names compare unescaped',
      token: signedAsWritten(H, inserted('"s\\u0075b":"01938f2e-7c1a-7000-8000-000000000002"')),
      ...base,
      expect: malformed,
    },
    // crit (RFC 7515 §4.1.11): a lease uses no extension, so any crit is refused.
    {
      name: 'crit-unknown-extension',
      description: 'crit names an extension no verifier knows, present in the header',
      token: signedAsWritten(segment(headerOf({ crit: ['x-keyward-ext'], 'x-keyward-ext': true })), P),
      ...base,
      expect: malformed,
    },
    {
      name: 'crit-not-an-array',
      description: 'crit is a string, not an array',
      token: signedAsWritten(segment(headerOf({ crit: 'x-keyward-ext', 'x-keyward-ext': true })), P),
      ...base,
      expect: malformed,
    },
    {
      name: 'crit-empty',
      description: 'crit is an empty array, which RFC 7515 forbids',
      token: signedAsWritten(segment(headerOf({ crit: [] })), P),
      ...base,
      expect: malformed,
    },
    {
      name: 'crit-b64',
      description: 'crit names b64 (RFC 7797, which some libraries know), b64 true: still no lease’s header',
      token: signedAsWritten(segment(headerOf({ b64: true, crit: ['b64'] })), P),
      ...base,
      expect: malformed,
    },
    // alg: EdDSA exactly, or no signature of a Keyward key.
    {
      name: 'alg-missing',
      description: 'no alg in the header, signed by the current key',
      token: signedAsWritten(segment(JSON.stringify({ kid: kidA, typ: LEASE_TYP })), P),
      ...base,
      expect: refused('signature'),
    },
    {
      name: 'alg-not-a-string',
      description: 'alg is an array holding EdDSA',
      token: signedAsWritten(segment(headerOf({ alg: ['EdDSA'] })), P),
      ...base,
      expect: refused('signature'),
    },
    {
      name: 'alg-in-other-case',
      description: 'alg eddsa: algorithm names compare exactly',
      token: signedAsWritten(segment(headerOf({ alg: 'eddsa' })), P),
      ...base,
      expect: refused('signature'),
    },
    // The key: chosen by the header's kid alone, exactly.
    {
      name: 'kid-missing',
      description: 'no kid in the header, signed by the current key: no key is tried without one',
      token: signedAsWritten(segment(JSON.stringify({ alg: 'EdDSA', typ: LEASE_TYP })), P),
      ...base,
      expect: refused('unknown-key'),
    },
    {
      name: 'kid-not-a-string',
      description: 'kid is a number',
      token: signedAsWritten(segment(headerOf({ kid: 1 })), P),
      ...base,
      expect: refused('unknown-key'),
    },
    {
      name: 'kid-prefix-of-a-key',
      description: 'kid is the first eight characters of the current key’s kid',
      token: signedAsWritten(segment(headerOf({ kid: kidA.slice(0, 8) })), P),
      ...base,
      expect: refused('unknown-key'),
    },
    {
      name: 'kid-of-retired-key-signed-by-current',
      description: 'kid names the retired key, the signature is the current key’s',
      token: signedAsWritten(segment(headerOf({ kid: await kidOf('B') })), P, 'A'),
      ...base,
      expect: refused('signature'),
    },
    {
      name: 'embedded-jwk',
      description: 'signed by a key the set does not hold, which the header carries as jwk: never trusted',
      token: signedAsWritten(segment(headerOf({ kid: await kidOf('C'), jwk: publicC })), P, 'C'),
      ...base,
      expect: refused('unknown-key'),
    },
    // Time claims: whole seconds from 0 to 253402300799 (9999-12-31T23:59:59Z), numbers only.
    timeCase('exp-fractional', 'exp half a second past a whole second', 'exp', String(claims.exp + 0.5)),
    timeCase(
      'nbf-fractional',
      'nbf half a second past a whole second, in the past',
      'nbf',
      String(claims.nbf + 0.5),
    ),
    timeCase('iat-fractional', 'iat half a second past a whole second', 'iat', String(claims.iat + 0.5)),
    timeCase('exp-negative', 'exp before 1970', 'exp', '-1'),
    timeCase('nbf-negative', 'nbf before 1970 (else the lease is valid)', 'nbf', '-1'),
    timeCase('exp-1e20', 'exp 1e20 seconds', 'exp', '1e20'),
    timeCase('exp-beyond-2-53', 'exp 2^53 + 1: no double holds it', 'exp', '9007199254740993'),
    timeCase('exp-after-year-9999', 'exp 253402300800, 10000-01-01T00:00:00Z', 'exp', '253402300800'),
    timeCase(
      'valid-exp-last-second-of-year-9999',
      'exp 253402300799, 9999-12-31T23:59:59Z: the latest time a lease may name',
      'exp',
      '253402300799',
      valid(claims),
    ),
    timeCase('exp-string', 'exp the string "1800604800"', 'exp', `"${claims.exp}"`),
    timeCase('iat-string', 'iat a string', 'iat', `"${claims.iat}"`),
    timeCase('nbf-null', 'nbf null', 'nbf', 'null'),
    timeCase('exp-boolean', 'exp true', 'exp', 'true'),
    timeCase('exp-nan', 'exp NaN, which is no JSON', 'exp', 'NaN'),
    timeCase('exp-zero', 'exp 0, 1970-01-01: a time, long past', 'exp', '0', refused('expired')),
    {
      name: 'valid-whole-seconds-written-otherwise',
      description:
        'exp written 1800604800.0 and nbf 1.7999964E9: whole seconds, however JSON writes the number',
      token: signedAsWritten(
        H,
        segment(
          json
            .replace(`"nbf":${claims.nbf},`, '"nbf":1.7999964E9,')
            .replace(`"exp":${claims.exp},`, `"exp":${claims.exp}.0,`),
        ),
      ),
      ...base,
      expect: valid(claims),
    },
    // The other claims' types and the header's typ.
    {
      name: 'aud-array',
      description: 'aud is an array holding the appKey: a lease’s aud is one string',
      token: signedAsWritten(H, segment(JSON.stringify({ ...claims, aud: [AUDIENCE] }))),
      ...base,
      expect: malformed,
    },
    {
      name: 'valid-typ-as-media-type',
      description: 'typ application/keyward-lease+jwt: the prefix may be written (RFC 7515 §4.1.9)',
      token: signedAsWritten(segment(headerOf({ typ: `application/${LEASE_TYP}` })), P),
      ...base,
      expect: valid(claims),
    },
    {
      name: 'valid-typ-in-capitals',
      description: 'typ KEYWARD-LEASE+JWT: media types compare without case',
      token: signedAsWritten(segment(headerOf({ typ: LEASE_TYP.toUpperCase() })), P),
      ...base,
      expect: valid(claims),
    },
  ];
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
      expect(await judged(c, leases.jwks), c.name).toEqual(c.expect);
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
