import { CROCKFORD, decodeTyped, encodeTyped, TypedCodeError } from './typed-code.js';

// The binary layouts of offline activation (docs/activation.md), version 1. Every message starts
// with its kind and its version, so a reader refuses what it does not know rather than misreading
// it; integers are big-endian; strings are a length byte and UTF-8.

export const ACTIVATION_VERSION = 1;
export const MESSAGE_KIND = { request: 0x52, lease: 0x4c, return: 0x58 } as const;
export type MessageKind = keyof typeof MESSAGE_KIND;

export const NONCE_BYTES = 8;
export const FINGERPRINT_HASH_BYTES = 10;
export const BINDING_BYTES = 6;
export const KID_PREFIX_BYTES = 4;
export const SIGNATURE_BYTES = 64;
/** The longest activation a request may ask for. */
export const MAX_ACTIVATION_DAYS = 365;

/** What is wrong with a message; `group` names the typed code's mistyped group (from 1). */
export class ActivationFormatError extends Error {
  constructor(
    message: string,
    readonly group: number | null = null,
  ) {
    super(message);
    this.name = 'ActivationFormatError';
  }
}

/** What an offline machine asks for: a seat of a product on a lock, for so many days. */
export interface ActivationRequest {
  appKey: string;
  assetNum: string;
  crmProductId: string;
  days: number;
  /** Seconds since the epoch, when the machine made the request. */
  createdAt: number;
  nonce: Uint8Array;
  /** The first bytes of SHA-256 of the machine's fingerprint: the fingerprint never leaves it. */
  fingerprintHash: Uint8Array;
}

/** An activation's answer in its typed form: the essential claims, signed by a runtime key. */
export interface TypedLeaseBody {
  kidPrefix: Uint8Array;
  leaseId: string;
  issuedAt: number;
  expiresAt: number;
  /** 0 offline days, 1 the license's end, 2 its usage time left (the lease claims' expBound). */
  expBound: number;
  nonce: Uint8Array;
  fingerprintHash: Uint8Array;
  /** SHA-256 of `appKey \n assetNum \n crmProductId`, first bytes: what the request asked for. */
  binding: Uint8Array;
}

/** What a machine that deleted its activated lease hands back, where its app allows early return. */
export interface ReturnCode {
  leaseId: string;
  nonce: Uint8Array;
  fingerprintHash: Uint8Array;
}

export const EXP_BOUNDS = ['offline-days', 'license-end', 'time-duration'] as const;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

class Writer {
  private readonly parts: number[] = [];
  byte(value: number): this {
    this.parts.push(value & 255);
    return this;
  }
  u16(value: number): this {
    return this.byte(value >> 8).byte(value);
  }
  u32(value: number): this {
    return this.byte(value >>> 24)
      .byte(value >>> 16)
      .byte(value >>> 8)
      .byte(value);
  }
  bytes(value: Uint8Array, length: number, what: string): this {
    if (value.length !== length) throw new ActivationFormatError(`${what} must be ${length} bytes`);
    for (const b of value) this.parts.push(b);
    return this;
  }
  text(value: string, what: string): this {
    const encoded = utf8.encode(value);
    if (encoded.length < 1 || encoded.length > 255) {
      throw new ActivationFormatError(`${what} must be 1 to 255 bytes of UTF-8`);
    }
    this.byte(encoded.length);
    for (const b of encoded) this.parts.push(b);
    return this;
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

class Reader {
  private at = 0;
  constructor(
    private readonly data: Uint8Array,
    private readonly what: string,
  ) {}
  private need(n: number, field: string): void {
    if (this.at + n > this.data.length) {
      throw new ActivationFormatError(`the ${this.what} is cut short: ${field} is missing`);
    }
  }
  byte(field: string): number {
    this.need(1, field);
    return this.data[this.at++] as number;
  }
  u16(field: string): number {
    return (this.byte(field) << 8) | this.byte(field);
  }
  u32(field: string): number {
    return ((this.u16(field) << 16) >>> 0) + this.u16(field);
  }
  bytes(n: number, field: string): Uint8Array {
    this.need(n, field);
    const out = this.data.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }
  text(field: string): string {
    const length = this.byte(field);
    if (length === 0) throw new ActivationFormatError(`the ${this.what}'s ${field} is empty`);
    try {
      return fromUtf8.decode(this.bytes(length, field));
    } catch (error) {
      if (error instanceof ActivationFormatError) throw error;
      throw new ActivationFormatError(`the ${this.what}'s ${field} is not UTF-8`);
    }
  }
  get offset(): number {
    return this.at;
  }
  end(): void {
    if (this.at !== this.data.length) {
      throw new ActivationFormatError(`the ${this.what} has ${this.data.length - this.at} bytes too many`);
    }
  }
}

function header(reader: Reader, kind: MessageKind, what: string): void {
  const found = reader.byte('its kind');
  if (found !== MESSAGE_KIND[kind]) {
    const other = (Object.keys(MESSAGE_KIND) as MessageKind[]).find((k) => MESSAGE_KIND[k] === found);
    throw new ActivationFormatError(
      other === undefined
        ? `this is not a Keyward ${what}`
        : `this is an activation ${other === 'lease' ? 'answer' : `${other} code`}, not a ${what}`,
    );
  }
  const version = reader.byte('its version');
  if (version !== ACTIVATION_VERSION) {
    throw new ActivationFormatError(
      `the ${what} is of version ${version}; this reads version ${ACTIVATION_VERSION}`,
    );
  }
}

function uuidBytes(id: string): Uint8Array {
  const hex = id.replace(/-/g, '');
  if (!/^[0-9a-f]{32}$/i.test(hex)) throw new ActivationFormatError(`${id} is not a lease id`);
  return Uint8Array.from(hex.match(/../g)?.map((h) => parseInt(h, 16)) ?? []);
}

function uuidText(bytes: Uint8Array): string {
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function encodeRequest(request: ActivationRequest): Uint8Array {
  if (!Number.isInteger(request.days) || request.days < 1 || request.days > MAX_ACTIVATION_DAYS) {
    throw new ActivationFormatError(`days must be 1 to ${MAX_ACTIVATION_DAYS}`);
  }
  return new Writer()
    .byte(MESSAGE_KIND.request)
    .byte(ACTIVATION_VERSION)
    .u16(request.days)
    .u32(request.createdAt)
    .bytes(request.nonce, NONCE_BYTES, 'nonce')
    .bytes(request.fingerprintHash, FINGERPRINT_HASH_BYTES, 'fingerprintHash')
    .text(request.appKey, 'appKey')
    .text(request.assetNum, 'assetNum')
    .text(request.crmProductId, 'crmProductId')
    .done();
}

export function decodeRequest(bytes: Uint8Array): ActivationRequest {
  const reader = new Reader(bytes, 'activation request');
  header(reader, 'request', 'activation request');
  const days = reader.u16('days');
  const createdAt = reader.u32('its time');
  const nonce = reader.bytes(NONCE_BYTES, 'its nonce');
  const fingerprintHash = reader.bytes(FINGERPRINT_HASH_BYTES, "the machine's fingerprint");
  const appKey = reader.text('appKey');
  const assetNum = reader.text('assetNum');
  const crmProductId = reader.text('crmProductId');
  reader.end();
  if (days < 1 || days > MAX_ACTIVATION_DAYS) {
    throw new ActivationFormatError(
      `the activation request asks for ${days} days; 1 to ${MAX_ACTIVATION_DAYS} are possible`,
    );
  }
  return { appKey, assetNum, crmProductId, days, createdAt, nonce, fingerprintHash };
}

/** The signed part of a typed lease; its signature follows it. */
export function encodeTypedLeaseBody(lease: TypedLeaseBody): Uint8Array {
  return new Writer()
    .byte(MESSAGE_KIND.lease)
    .byte(ACTIVATION_VERSION)
    .bytes(lease.kidPrefix, KID_PREFIX_BYTES, 'kidPrefix')
    .bytes(uuidBytes(lease.leaseId), 16, 'leaseId')
    .u32(lease.issuedAt)
    .u32(lease.expiresAt)
    .byte(lease.expBound)
    .bytes(lease.nonce, NONCE_BYTES, 'nonce')
    .bytes(lease.fingerprintHash, FINGERPRINT_HASH_BYTES, 'fingerprintHash')
    .bytes(lease.binding, BINDING_BYTES, 'binding')
    .done();
}

/** The body and the signature of a typed lease, read but not verified. */
export function decodeTypedLease(bytes: Uint8Array): {
  body: TypedLeaseBody;
  signed: Uint8Array;
  signature: Uint8Array;
} {
  const reader = new Reader(bytes, 'activation answer');
  header(reader, 'lease', 'activation answer');
  const body: TypedLeaseBody = {
    kidPrefix: reader.bytes(KID_PREFIX_BYTES, 'its key'),
    leaseId: uuidText(reader.bytes(16, 'its lease id')),
    issuedAt: reader.u32('its time'),
    expiresAt: reader.u32('its expiry'),
    expBound: reader.byte('its bound'),
    nonce: reader.bytes(NONCE_BYTES, "its request's nonce"),
    fingerprintHash: reader.bytes(FINGERPRINT_HASH_BYTES, "the machine's fingerprint"),
    binding: reader.bytes(BINDING_BYTES, 'what it was asked for'),
  };
  const signedLength = reader.offset;
  const signature = reader.bytes(SIGNATURE_BYTES, 'its signature');
  reader.end();
  if (body.expBound >= EXP_BOUNDS.length)
    throw new ActivationFormatError('the activation answer names an unknown bound');
  return { body, signed: bytes.slice(0, signedLength), signature };
}

export function encodeReturnCode(code: ReturnCode): Uint8Array {
  return new Writer()
    .byte(MESSAGE_KIND.return)
    .byte(ACTIVATION_VERSION)
    .bytes(uuidBytes(code.leaseId), 16, 'leaseId')
    .bytes(code.nonce, NONCE_BYTES, 'nonce')
    .bytes(code.fingerprintHash, FINGERPRINT_HASH_BYTES, 'fingerprintHash')
    .done();
}

export function decodeReturnCode(bytes: Uint8Array): ReturnCode {
  const reader = new Reader(bytes, 'return code');
  header(reader, 'return', 'return code');
  const leaseId = uuidText(reader.bytes(16, 'its lease id'));
  const nonce = reader.bytes(NONCE_BYTES, "its request's nonce");
  const fingerprintHash = reader.bytes(FINGERPRINT_HASH_BYTES, "the machine's fingerprint");
  reader.end();
  return { leaseId, nonce, fingerprintHash };
}

/** A typed code read into bytes, a mistyped group named as a format error. */
export function bytesOfTyped(text: string): Uint8Array {
  try {
    return decodeTyped(text);
  } catch (error) {
    if (error instanceof TypedCodeError) throw new ActivationFormatError(error.message, error.group);
    throw error;
  }
}

export { encodeTyped };

async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>));
}

/** The machine's fingerprint as an activation carries it: never the fingerprint itself. */
export async function fingerprintHashOf(fingerprint: string): Promise<Uint8Array> {
  return (await sha256(utf8.encode(fingerprint))).slice(0, FINGERPRINT_HASH_BYTES);
}

/**
 * The fingerprint an activated lease's JWS names (its `fingerprint` claim): `fph1:` and the hash in
 * base32. A machine verifies the lease file with this in place of its raw fingerprint.
 */
export function activatedFingerprint(hash: Uint8Array): string {
  let bits = 0;
  let buffer = 0;
  let out = 'fph1:';
  for (const byte of hash) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += CROCKFORD[(buffer >> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out += CROCKFORD[(buffer << (5 - bits)) & 31];
  return out;
}

/** SHA-256 of `appKey \n assetNum \n crmProductId`, first bytes: binds an answer to what was asked. */
export async function bindingOf(
  request: Pick<ActivationRequest, 'appKey' | 'assetNum' | 'crmProductId'>,
): Promise<Uint8Array> {
  return (await sha256(utf8.encode(`${request.appKey}\n${request.assetNum}\n${request.crmProductId}`))).slice(
    0,
    BINDING_BYTES,
  );
}

/** The first bytes of a JWK's kid (its RFC 7638 thumbprint, base64url): how a typed lease names its key. */
export function kidPrefixOf(kid: string): Uint8Array {
  const binary = atob(kid.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (kid.length % 4)) % 4));
  return Uint8Array.from(binary.slice(0, KID_PREFIX_BYTES), (c) => c.charCodeAt(0));
}

/** A nonce as an activated lease's JWS names it (`activation.nonce`): base64url. */
export function nonceText(nonce: Uint8Array): string {
  return btoa(String.fromCharCode(...nonce))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The bytes a typed lease's signature covers: a label, so it can never be taken for another message. */
export function typedLeaseSigningInput(signed: Uint8Array): Uint8Array {
  const label = utf8.encode('keyward typed lease v1\n');
  const out = new Uint8Array(label.length + signed.length);
  out.set(label);
  out.set(signed, label.length);
  return out;
}
