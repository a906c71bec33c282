import type { JSONWebKeySet } from 'jose';
import { KeywardLeaseError } from '../errors.js';
import { verifyLease } from '../verify-lease.js';
import {
  ActivationFormatError,
  activatedFingerprint,
  bindingOf,
  bytesOfTyped,
  decodeRequest,
  decodeTypedLease,
  encodeRequest,
  encodeReturnCode,
  encodeTyped,
  EXP_BOUNDS,
  fingerprintHashOf,
  kidPrefixOf,
  NONCE_BYTES,
  nonceText,
  typedLeaseSigningInput,
  type ActivationRequest,
} from './messages.js';

// Offline activation where the software runs (docs/activation.md): the machine writes a request,
// someone who can reach Keyward turns it into an answer, and the machine verifies the answer with
// the keys it shipped with. WebCrypto only, as verify-lease.ts: it runs in browsers too.

/** A request as a file: its code (what the server reads) and, for people, what it asks. */
export interface ActivationRequestFile {
  keyward: 'activation-request';
  version: 1;
  code: string;
  appKey: string;
  assetNum: string;
  crmProductId: string;
  days: number;
  createdAt: string;
}

/** An answer as a file: the signed lease (JWS) and its typed form. */
export interface ActivationAnswerFile {
  keyward: 'activation-answer';
  version: 1;
  leaseId: string;
  lease: string;
  code: string;
  expiresAt: string;
}

export interface PendingActivation {
  request: ActivationRequest;
  /** The typed form, to show or print for the person who takes it to Keyward. */
  code: string;
  file: ActivationRequestFile;
}

/** Writes a request for `days` days of a product on a lock, for this machine. */
export async function createActivationRequest(options: {
  appKey: string;
  assetNum: string;
  crmProductId: string;
  days: number;
  fingerprint: string;
  now?: Date;
  nonce?: Uint8Array;
}): Promise<PendingActivation> {
  const createdAt = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const request: ActivationRequest = {
    appKey: options.appKey,
    assetNum: options.assetNum,
    crmProductId: options.crmProductId,
    days: options.days,
    createdAt,
    nonce: options.nonce ?? crypto.getRandomValues(new Uint8Array(NONCE_BYTES)),
    fingerprintHash: await fingerprintHashOf(options.fingerprint),
  };
  const code = encodeTyped(encodeRequest(request));
  return {
    request,
    code,
    file: {
      keyward: 'activation-request',
      version: 1,
      code,
      appKey: request.appKey,
      assetNum: request.assetNum,
      crmProductId: request.crmProductId,
      days: request.days,
      createdAt: new Date(createdAt * 1000).toISOString(),
    },
  };
}

/** A request from its typed code or its file's text (the file's `code` is what counts). */
export function readActivationRequest(text: string): ActivationRequest {
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    let file: unknown;
    try {
      file = JSON.parse(trimmed);
    } catch {
      throw new ActivationFormatError('the request file is not JSON');
    }
    const code = (file as { code?: unknown } | null)?.code;
    if (
      (file as { keyward?: unknown } | null)?.keyward !== 'activation-request' ||
      typeof code !== 'string'
    ) {
      throw new ActivationFormatError('the file is not a Keyward activation request');
    }
    return decodeRequest(bytesOfTyped(code));
  }
  return decodeRequest(bytesOfTyped(trimmed));
}

/** What a verified activation answer says. */
export interface ActivatedLease {
  leaseId: string;
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  expBound: (typeof EXP_BOUNDS)[number];
  assetNum: string;
  crmProductId: string;
  appKey: string;
}

const same = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((v, i) => v === b[i]);

function refuse(reason: ConstructorParameters<typeof KeywardLeaseError>[0], detail: string): never {
  throw new KeywardLeaseError(reason, `activation refused (${reason}): ${detail}`);
}

async function verifyTyped(
  code: string,
  request: ActivationRequest,
  jwks: JSONWebKeySet,
  fingerprint: string,
  nowSeconds: number,
): Promise<ActivatedLease> {
  let decoded: ReturnType<typeof decodeTypedLease>;
  try {
    decoded = decodeTypedLease(bytesOfTyped(code));
  } catch (error) {
    if (error instanceof ActivationFormatError) refuse('malformed', error.message);
    throw error;
  }
  const { body, signed, signature } = decoded;
  const key = jwks.keys.find(
    (k) =>
      typeof k.kid === 'string' &&
      k.kty === 'OKP' &&
      k.crv === 'Ed25519' &&
      same(kidPrefixOf(k.kid), body.kidPrefix),
  );
  if (key === undefined) refuse('unknown-key', 'no key of the key set signed it');
  const publicKey = await crypto.subtle.importKey(
    'jwk',
    { kty: 'OKP', crv: 'Ed25519', x: key.x },
    { name: 'Ed25519' },
    false,
    ['verify'],
  );
  const valid = await crypto.subtle.verify(
    { name: 'Ed25519' },
    publicKey,
    signature as Uint8Array<ArrayBuffer>,
    typedLeaseSigningInput(signed) as Uint8Array<ArrayBuffer>,
  );
  if (!valid) refuse('signature', 'its signature does not verify');
  if (body.issuedAt > nowSeconds) refuse('not-yet-valid', 'it is dated in the future');
  if (body.expiresAt <= nowSeconds) refuse('expired', 'it has expired');
  if (!same(body.nonce, request.nonce) || !same(body.binding, await bindingOf(request))) {
    refuse('request', 'it answers another activation request');
  }
  if (!same(body.fingerprintHash, await fingerprintHashOf(fingerprint))) {
    refuse('fingerprint', 'it was activated for another machine');
  }
  return {
    leaseId: body.leaseId,
    issuedAt: body.issuedAt,
    expiresAt: body.expiresAt,
    expBound: EXP_BOUNDS[body.expBound] ?? 'offline-days',
    assetNum: request.assetNum,
    crmProductId: request.crmProductId,
    appKey: request.appKey,
  };
}

/**
 * Verifies an activation's answer on the machine that asked: its typed code, the answer file's
 * text, or the signed lease alone. It must be signed by a key of `jwks` (the keys the software
 * shipped with), answer this very request (its nonce, app, lock and product), be for this machine
 * and be in its time. Rejects with KeywardLeaseError: a reason of verifyLease's, or `request`.
 */
export async function verifyActivation(
  answer: string,
  options: { request: ActivationRequest; jwks: JSONWebKeySet; fingerprint: string; now?: Date },
): Promise<ActivatedLease> {
  const now = options.now ?? new Date();
  const nowSeconds = Math.floor(now.getTime() / 1000);
  const text = answer.trim();
  let lease = text;
  if (text.startsWith('{')) {
    let file: Partial<ActivationAnswerFile>;
    try {
      file = JSON.parse(text) as Partial<ActivationAnswerFile>;
    } catch {
      refuse('malformed', 'the answer file is not JSON');
    }
    if (file.keyward !== 'activation-answer' || typeof file.lease !== 'string') {
      refuse('malformed', 'the file is not a Keyward activation answer');
    }
    lease = file.lease;
  }
  if (lease.split('.').length !== 3) {
    return verifyTyped(lease, options.request, options.jwks, options.fingerprint, nowSeconds);
  }
  const claims = await verifyLease(lease, {
    jwks: options.jwks,
    fingerprint: activatedFingerprint(await fingerprintHashOf(options.fingerprint)),
    audience: options.request.appKey,
    now,
  });
  const nonce = claims.activation?.nonce;
  if (
    nonce === undefined ||
    nonce !== nonceText(options.request.nonce) ||
    claims.assetNum !== options.request.assetNum ||
    claims.product.crmProductId !== options.request.crmProductId
  ) {
    refuse('request', 'it answers another activation request');
  }
  return {
    leaseId: claims.sub,
    issuedAt: claims.iat,
    expiresAt: claims.exp,
    expBound: claims.expBound ?? 'offline-days',
    assetNum: claims.assetNum,
    crmProductId: options.request.crmProductId,
    appKey: options.request.appKey,
  };
}

/** The code a machine hands back after deleting its activated lease (honoured where its app allows). */
export function returnCodeFor(request: ActivationRequest, leaseId: string): string {
  return encodeTyped(
    encodeReturnCode({ leaseId, nonce: request.nonce, fingerprintHash: request.fingerprintHash }),
  );
}
