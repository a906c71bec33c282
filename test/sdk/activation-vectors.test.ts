import fs from 'node:fs';
import path from 'node:path';
import { importJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  activatedFingerprint,
  bindingOf,
  bytesOfTyped,
  decodeRequest,
  encodeRequest,
  encodeTyped,
  encodeTypedLeaseBody,
  fingerprintHashOf,
  KeywardLeaseError,
  kidPrefixOf,
  LEASE_ISSUER,
  LEASE_TYP,
  nonceText,
  returnCodeFor,
  typedLeaseSigningInput,
  verifyActivation,
  type ActivationRequest,
  type LeaseFailure,
} from '@keyward/client';
import { DAY, document, keySet, KEYS, kidOf, NOW, type KeyName } from './conformance-keys.js';

// The offline-activation half of the SDK conformance suite: sdks/conformance/activation.json,
// made with the server's layouts and checked against the TypeScript client, as
// conformance-vectors.test.ts does for leases and webhooks (the same keys: A signs, B is an older
// key still published, C no key of the set). `KEYWARD_WRITE_VECTORS=1` rewrites the file.

const FILE = path.resolve(import.meta.dirname, '../../sdks/conformance/activation.json');
const WRITE = process.env.KEYWARD_WRITE_VECTORS === '1';
const FINGERPRINT = 'fp-conformance-offline-machine';
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

async function requestOf(
  overrides: Partial<Omit<ActivationRequest, 'fingerprintHash'>> & { fingerprint?: string } = {},
) {
  const { fingerprint = FINGERPRINT, ...fields } = overrides;
  const request: ActivationRequest = {
    appKey: 'kw_conformance_app',
    assetNum: '8000000001',
    crmProductId: 'demo-simulator',
    days: 30,
    createdAt: NOW - 600,
    nonce: Uint8Array.from([0x5e, 0xed, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06]),
    fingerprintHash: await fingerprintHashOf(fingerprint),
    ...fields,
  };
  return request;
}

/** A typed answer as ActivationService signs it, with key `name`. */
async function typedAnswer(
  request: ActivationRequest,
  options: { key?: KeyName; issuedAt?: number; expiresAt?: number; expBound?: number; tamper?: boolean } = {},
): Promise<string> {
  const name = options.key ?? 'A';
  const body = encodeTypedLeaseBody({
    kidPrefix: kidPrefixOf(await kidOf(name)),
    leaseId: '01938f2e-7c1a-7000-8000-00000000a001',
    issuedAt: options.issuedAt ?? NOW - 300,
    expiresAt: options.expiresAt ?? NOW + 30 * DAY,
    expBound: options.expBound ?? 0,
    nonce: request.nonce,
    fingerprintHash: request.fingerprintHash,
    binding: await bindingOf(request),
  });
  const key = (await importJWK(KEYS[name], 'EdDSA')) as CryptoKey;
  const signature = new Uint8Array(
    await crypto.subtle.sign('Ed25519', key, typedLeaseSigningInput(body) as Uint8Array<ArrayBuffer>),
  );
  if (options.tamper === true) body[body.length - 1] = (body.at(-1) ?? 0) ^ 1;
  return encodeTyped(Uint8Array.from([...body, ...signature]));
}

/** The activated lease's JWS, as the runtime signs it for an activation. */
async function jwsAnswer(request: ActivationRequest): Promise<string> {
  const key = await importJWK(KEYS.A, 'EdDSA');
  return new SignJWT({
    iss: LEASE_ISSUER,
    sub: '01938f2e-7c1a-7000-8000-00000000a001',
    jti: '01938f2e-7c1a-7000-8000-00000000a001',
    aud: request.appKey,
    iat: NOW - 300,
    nbf: NOW - 300,
    exp: NOW + 30 * DAY,
    holder: { kind: 'lock', assetNum: request.assetNum },
    fingerprint: activatedFingerprint(request.fingerprintHash),
    assetNum: request.assetNum,
    product: { crmProductId: request.crmProductId, productUri: 'gms-2001', productName: 'Simulator' },
    limits: {
      concurrent: 1,
      timeDurationSeconds: null,
      amount: null,
      startDate: (NOW - 30 * DAY) * 1000,
      endDate: (NOW + 60 * DAY) * 1000,
    },
    expBound: 'offline-days',
    activation: { nonce: nonceText(request.nonce) },
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: await kidOf('A'), typ: LEASE_TYP })
    .sign(key);
}

type Expect =
  | { valid: true; leaseId: string; expiresAt: number; expBound: string }
  | { valid: false; reason: LeaseFailure };

async function vectors() {
  const request = await requestOf();
  const requestCode = encodeTyped(encodeRequest(request));
  const other = await requestOf({ nonce: Uint8Array.from([9, 9, 9, 9, 9, 9, 9, 9]) });
  const ok: Expect = {
    valid: true,
    leaseId: '01938f2e-7c1a-7000-8000-00000000a001',
    expiresAt: NOW + 30 * DAY,
    expBound: 'offline-days',
  };
  const typed = await typedAnswer(request);
  const groups = typed.split('-');
  const fifth = groups[4] as string;
  groups[4] = (fifth[0] === 'Z' ? 'Y' : 'Z') + fifth.slice(1);
  const jws = await jwsAnswer(request);
  const jwks = await keySet();
  const answer = (
    name: string,
    description: string,
    text: string,
    expect: Expect,
    fingerprint = FINGERPRINT,
  ) => ({
    name,
    description,
    request: requestCode,
    fingerprint,
    answer: text,
    expect,
  });
  const requestCase = async (name: string, fields: Parameters<typeof requestOf>[0]) => {
    const r = await requestOf(fields);
    return {
      name,
      fields: {
        appKey: r.appKey,
        assetNum: r.assetNum,
        crmProductId: r.crmProductId,
        days: r.days,
        createdAt: r.createdAt,
        nonce: hex(r.nonce),
        fingerprint: fields?.fingerprint ?? FINGERPRINT,
      },
      fingerprintHash: hex(r.fingerprintHash),
      code: encodeTyped(encodeRequest(r)),
    };
  };
  const code = encodeTyped(Uint8Array.from({ length: 20 }, (_, i) => i * 11));
  const codeGroups = code.split('-');
  return {
    version: 1,
    now: NOW,
    jwks,
    requests: [
      await requestCase('lock-30-days', {}),
      await requestCase('one-day-non-ascii-product', {
        days: 1,
        crmProductId: 'Simulateur-é-模拟',
        fingerprint: 'fp-Ünïcode-machine',
      }),
      await requestCase('long-asset-number', { assetNum: 'SN-'.padEnd(60, 'x'), days: 365 }),
    ],
    typedCodes: [
      { name: 'as-written', text: code, expect: { bytes: hex(bytesOfTyped(code)) } },
      {
        name: 'sloppy',
        description: 'lower case, O for 0, l for 1, spaces for dashes',
        text: code.toLowerCase().replace(/-/g, ' ').replace(/0/g, 'o').replace(/1/g, 'l'),
        expect: { bytes: hex(bytesOfTyped(code)) },
      },
      {
        name: 'group-2-mistyped',
        text: [
          codeGroups[0],
          `${(codeGroups[1] as string)[0] === 'A' ? 'B' : 'A'}${(codeGroups[1] as string).slice(1)}`,
          ...codeGroups.slice(2),
        ].join('-'),
        expect: { error: true, group: 2 },
      },
      {
        name: 'foreign-character',
        text: `${code.slice(0, 8)}U${code.slice(9)}`,
        expect: { error: true, group: 2 },
      },
      {
        name: 'groups-swapped',
        text: [codeGroups[1], codeGroups[0], ...codeGroups.slice(2)].join('-'),
        expect: { error: true, group: 1 },
      },
    ],
    answers: [
      answer('typed', 'the typed answer, key A', typed, ok),
      answer('jws', 'the signed lease of the answer file', jws, ok),
      answer(
        'file',
        'the answer file’s text',
        JSON.stringify({
          keyward: 'activation-answer',
          version: 1,
          leaseId: ok.leaseId,
          lease: jws,
          code: typed,
          expiresAt: new Date((NOW + 30 * DAY) * 1000).toISOString(),
        }),
        ok,
      ),
      answer(
        'typed-older-key',
        'signed by the key retired by a rotation',
        await typedAnswer(request, { key: 'B' }),
        ok,
      ),
      answer(
        'typed-license-end',
        'bounded by the license’s end',
        await typedAnswer(request, { expiresAt: NOW + 2 * DAY, expBound: 1 }),
        {
          ...ok,
          expiresAt: NOW + 2 * DAY,
          expBound: 'license-end',
        },
      ),
      answer(
        'typed-unknown-key',
        'signed by a key the set does not hold',
        await typedAnswer(request, { key: 'C' }),
        { valid: false, reason: 'unknown-key' },
      ),
      answer(
        'typed-tampered',
        'one bit of the body changed, its checks recomputed',
        await typedAnswer(request, { tamper: true }),
        { valid: false, reason: 'signature' },
      ),
      answer('typed-mistyped', 'one character of group 5 typed wrong', groups.join('-'), {
        valid: false,
        reason: 'malformed',
      }),
      answer('typed-cut-short', 'the last groups missing', typed.split('-').slice(0, -3).join('-'), {
        valid: false,
        reason: 'malformed',
      }),
      answer('typed-expired', 'expired a minute ago', await typedAnswer(request, { expiresAt: NOW - 60 }), {
        valid: false,
        reason: 'expired',
      }),
      answer(
        'typed-not-yet-valid',
        'issued an hour ahead',
        await typedAnswer(request, { issuedAt: NOW + 3600 }),
        { valid: false, reason: 'not-yet-valid' },
      ),
      answer(
        'typed-other-machine',
        'this request’s answer, verified on another machine',
        typed,
        { valid: false, reason: 'fingerprint' },
        'fp-another-machine',
      ),
      answer(
        'typed-other-request',
        'the answer to another request of the machine',
        await typedAnswer(other),
        { valid: false, reason: 'request' },
      ),
      answer(
        'jws-other-machine',
        'the signed lease, verified on another machine',
        jws,
        { valid: false, reason: 'fingerprint' },
        'fp-another-machine',
      ),
      answer('jws-other-request', 'the signed lease of another request', await jwsAnswer(other), {
        valid: false,
        reason: 'request',
      }),
    ],
    returns: [
      {
        name: 'early-return',
        request: requestCode,
        leaseId: ok.leaseId,
        code: returnCodeFor(request, ok.leaseId),
      },
    ],
  };
}

describe('the offline activation vectors', () => {
  it('are the committed file, and the TypeScript client judges each as it expects', async () => {
    const made = await vectors();
    const text = await document(made);
    if (WRITE) fs.writeFileSync(FILE, text);
    expect(fs.readFileSync(FILE, 'utf8')).toBe(text);

    for (const c of made.requests) {
      const decoded = decodeRequest(bytesOfTyped(c.code));
      expect(decoded, c.name).toMatchObject({
        appKey: c.fields.appKey,
        assetNum: c.fields.assetNum,
        days: c.fields.days,
      });
      expect(hex(decoded.nonce)).toBe(c.fields.nonce);
      expect(hex(decoded.fingerprintHash)).toBe(c.fingerprintHash);
    }
    for (const c of made.typedCodes) {
      if ('bytes' in c.expect) expect(hex(bytesOfTyped(c.text)), c.name).toBe(c.expect.bytes);
      else expect(() => bytesOfTyped(c.text), c.name).toThrow(new RegExp(`group ${c.expect.group}\\b`));
    }
    for (const c of made.answers) {
      const request = decodeRequest(bytesOfTyped(c.request));
      const outcome = await verifyActivation(c.answer, {
        request,
        jwks: made.jwks,
        fingerprint: c.fingerprint,
        now: new Date(NOW * 1000),
      }).then(
        (lease) => ({
          valid: true,
          leaseId: lease.leaseId,
          expiresAt: lease.expiresAt,
          expBound: lease.expBound,
        }),
        (error: unknown) => {
          if (error instanceof KeywardLeaseError) return { valid: false, reason: error.reason };
          throw error;
        },
      );
      expect(outcome, c.name).toEqual(c.expect);
    }
    for (const c of made.returns) {
      expect(returnCodeFor(decodeRequest(bytesOfTyped(c.request)), c.leaseId)).toBe(c.code);
    }
  });
});
