import { decodeTyped, encodeTyped, kidPrefixOf, TypedCodeError } from '../../keyward-client.js';
import { LEASE_ALGORITHM, thumbprintOf } from '../runtime-keys/ed25519.js';
import { GRANT_TYP, type GrantedLicense, type PoolGrantClaims, type RelayPublicJwk } from './pool-grant.js';
import {
  RELAY_REQUEST_ISSUER,
  RELAY_REQUEST_TYP,
  RelayRequestError,
  type RelayRequestClaims,
} from './relay-request.js';
import { RELAY_RETURN_TYP, type RelayReturnClaims, type UsedShare } from './relay-return.js';

// The typed form of the relay exchange (docs/activation.md, "The typed code"): for a closed network
// where a file cannot cross but a person can read a code over the phone. A code carries only what
// the reader cannot know and the JWS's signature; the reader rebuilds the exact compact JWS the
// signer made (same header, same claims in the same key order), so the token goes through the
// checks every JWS goes through and nothing is trusted for being typed. Layouts, version 1,
// integers big-endian, texts a length byte (1 to 255) and UTF-8:
//
//   request 0x72 01 | sub text | key x (32) | fingerprint text | iat u32 | until u32
//                   | count u8 | per license: assetNum text, crmProductId (length 0: null), seats u32
//                   | signature (64)
//   grant   0x67 01 | vendor kid prefix (4) | jti uuid (16) | iat u32 (= nbf) | exp u32
//                   | count u8 | per license: assetNum text, crmProductId text, seats u32
//                   | machines u8 (0: null, n + 1: n texts follow) | overage policy u8
//                   (0 refuse, 1 allow) | overage seats u32 | signature (64)
//   return  0x78 01 | sub text | jti uuid (16) | iat u32 | grant uuid (16) | signature (64)
//
// Version 2 is version 1 with the shares of usage limits a grant holds (docs/relay.md): each
// license of a request or a grant has, after its seats, a flags byte (1: timeSeconds u32 follows,
// 2: amount u32 follows, in that order), and a return has, before its signature, the use it gives
// back: count u8 | per license: assetNum text, crmProductId text, flags u8, the same u32s. A token
// without shares is written in version 1, so the codes of grants without them do not change.

/** The kind byte of each relay code: the lower case of activation's (R, L, X), none of theirs. */
export const RELAY_CODE_KIND = { request: 0x72, grant: 0x67, return: 0x78 } as const;
export type RelayCodeKind = keyof typeof RELAY_CODE_KIND;
export const RELAY_CODE_VERSION = 1;
/** The version of codes whose licenses carry shares of usage limits. */
export const RELAY_CODE_VERSION_SHARES = 2;
/** Past this a code is too long to type: the file is the way then. */
export const RELAY_CODE_MAX_BYTES = 600;

const SIGNATURE_BYTES = 64;
const KEY_BYTES = 32;
const UUID_BYTES = 16;
const KID_PREFIX_BYTES = 4;
const GRANT_ISSUER = 'keyward';
const OVERAGE_POLICIES = ['refuse', 'allow'] as const;

/** Activation's kinds (packages/client, messages.ts), named when one is given to a relay reader. */
const ACTIVATION_KINDS: Record<number, string> = {
  0x52: 'an activation request code',
  0x4c: 'an activation answer',
  0x58: 'an activation return code',
};

/**
 * A relay code that does not read; `group` names the mistyped group (from 1) where one is. A
 * RelayRequestError, so wherever a request's or return's refusal is shown, a code's is too.
 */
export class RelayCodeError extends RelayRequestError {
  constructor(
    what: string,
    readonly group: number | null = null,
  ) {
    super(`code: ${what}`);
    this.name = 'RelayCodeError';
  }
}

/** Three base64url parts joined by dots: a token's file, not a typed code (which has no dots). */
export function isCompactJws(text: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(text.trim());
}

/**
 * Whether a text is meant as a typed code: the characters a person may type for one (Crockford's,
 * any case, I, L and O for their digits; never U) with dashes and spaces. Anything else is read
 * as a file, whose reader says what is wrong with it.
 */
export function isTypedCode(text: string): boolean {
  return /^[0-9A-TV-Za-tv-z][0-9A-TV-Za-tv-z\s-]{9,}$/.test(text.trim());
}

/** A code's refusal said of the field that carried it: `request: as a typed code, group 3 …`. */
export function codeRefusalOf(field: string, error: RelayCodeError): string {
  return `${field}: as a typed code, ${error.message.replace(/^code: /, '')}`;
}

// ---------------------------------------------------------------------------------------------
// Writing: any token that does not fit a layout is not canonical, and its encoder answers null.

/** Thrown while encoding only, and always caught there: the token has no typed form. */
class NotCanonical extends Error {}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

class Writer {
  private readonly parts: number[] = [];
  byte(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 255) throw new NotCanonical();
    this.parts.push(value);
    return this;
  }
  u32(value: number): this {
    if (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff) throw new NotCanonical();
    return this.byte(Math.floor(value / 0x100_0000))
      .byte((value >>> 16) & 255)
      .byte((value >>> 8) & 255)
      .byte(value & 255);
  }
  bytes(value: Uint8Array, length: number): this {
    if (value.length !== length) throw new NotCanonical();
    this.parts.push(...value);
    return this;
  }
  text(value: string): this {
    const encoded = utf8.encode(value);
    if (encoded.length < 1) throw new NotCanonical();
    return this.byte(encoded.length).bytes(encoded, encoded.length);
  }
  /** A text or null: null is length 0, which no text has. */
  optionalText(value: string | null): this {
    return value === null ? this.byte(0) : this.text(value);
  }
  done(): Uint8Array {
    return Uint8Array.from(this.parts);
  }
}

function textOf(value: unknown): string {
  if (typeof value !== 'string') throw new NotCanonical();
  return value;
}

function recordOf(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new NotCanonical();
  return value as Record<string, unknown>;
}

function listOf(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw new NotCanonical();
  return value;
}

function numberOf(value: unknown): number {
  if (typeof value !== 'number') throw new NotCanonical();
  return value;
}

function uuidBytes(id: unknown): Uint8Array {
  // Lower case, as randomUUID makes them and as the reader writes them back.
  if (typeof id !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(id)) {
    throw new NotCanonical();
  }
  return Uint8Array.from(Buffer.from(id.replace(/-/g, ''), 'hex'));
}

/** The first bytes of a kid, as activation names its key; a kid that is no base64url has none. */
function prefixOf(kid: string): Uint8Array {
  try {
    return kidPrefixOf(kid);
  } catch {
    throw new NotCanonical();
  }
}

function base64urlBytes(value: unknown, length: number): Uint8Array {
  const bytes = Uint8Array.from(Buffer.from(textOf(value), 'base64url'));
  if (bytes.length !== length) throw new NotCanonical();
  return bytes;
}

interface TokenParts {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  signature: Uint8Array;
}

function partsOf(token: string): TokenParts {
  if (!isCompactJws(token)) throw new NotCanonical();
  const [header, payload, signature] = token.split('.');
  const json = (part: string | undefined) =>
    recordOf(JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8')));
  return {
    header: json(header),
    payload: json(payload),
    signature: base64urlBytes(signature, SIGNATURE_BYTES),
  };
}

function start(kind: RelayCodeKind, shares = false): Writer {
  return new Writer()
    .byte(RELAY_CODE_KIND[kind])
    .byte(shares ? RELAY_CODE_VERSION_SHARES : RELAY_CODE_VERSION);
}

type Shares = Pick<GrantedLicense, 'timeSeconds' | 'amount'>;
const SHARE_TIME = 1;
const SHARE_AMOUNT = 2;

/** Whether any license (of a request, a grant, a return's use) carries a share. */
function anyShares(licenses: readonly unknown[]): boolean {
  return licenses.some((l) => {
    const license = recordOf(l);
    return license.timeSeconds !== undefined || license.amount !== undefined;
  });
}

/** A license's shares: their flags byte, then each present one. */
function writeShares(writer: Writer, license: Record<string, unknown>): void {
  const time = license.timeSeconds === undefined ? null : numberOf(license.timeSeconds);
  const amount = license.amount === undefined ? null : numberOf(license.amount);
  writer.byte((time === null ? 0 : SHARE_TIME) | (amount === null ? 0 : SHARE_AMOUNT));
  if (time !== null) writer.u32(time);
  if (amount !== null) writer.u32(amount);
}

/** A license's shares as a version-2 code writes them; none in version 1. */
function readShares(reader: Reader): Shares {
  if (reader.version === RELAY_CODE_VERSION) return {};
  const flags = reader.byte("a license's shares");
  if ((flags & ~(SHARE_TIME | SHARE_AMOUNT)) !== 0) {
    throw new RelayCodeError(`the ${reader.what} names an unknown share of a license`);
  }
  return {
    ...((flags & SHARE_TIME) === 0 ? {} : { timeSeconds: reader.u32("a license's time") }),
    ...((flags & SHARE_AMOUNT) === 0 ? {} : { amount: reader.u32("a license's amount") }),
  };
}

/** An encoder's failure that says the token has no typed form, rather than a fault of this code. */
function noTypedForm(error: unknown): boolean {
  return error instanceof NotCanonical || error instanceof RelayCodeError || error instanceof SyntaxError;
}

interface Candidate {
  token: string;
  parts: TokenParts;
  code: string;
}

/** A code for `token`, not yet read back; null when the token does not fit the layout or is too long. */
function candidateOf(token: string, bytesOf: (parts: TokenParts) => Uint8Array): Candidate | null {
  const given = token.trim();
  try {
    const parts = partsOf(given);
    const bytes = bytesOf(parts);
    return bytes.length > RELAY_CODE_MAX_BYTES ? null : { token: given, parts, code: encodeTyped(bytes) };
  } catch (error) {
    if (noTypedForm(error)) return null;
    throw error;
  }
}

/**
 * The candidate's code if it reads back to the very token: a claim in another order, one more
 * claim, another header, and the reader would rebuild another token, so a code never stands for it.
 */
async function checkedCode(
  candidate: Candidate | null,
  rebuild: (code: string, parts: TokenParts) => string | Promise<string>,
): Promise<string | null> {
  if (candidate === null) return null;
  try {
    return (await rebuild(candidate.code, candidate.parts)) === candidate.token ? candidate.code : null;
  } catch (error) {
    if (noTypedForm(error)) return null;
    throw error;
  }
}

/** The same, for codes whose reader needs nothing asynchronous. */
function checkedCodeSync(
  candidate: Candidate | null,
  rebuild: (code: string, parts: TokenParts) => string,
): string | null {
  if (candidate === null) return null;
  try {
    return rebuild(candidate.code, candidate.parts) === candidate.token ? candidate.code : null;
  } catch (error) {
    if (noTypedForm(error)) return null;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Reading: every way a code does not read is a RelayCodeError.

const KIND_NAMES: Record<RelayCodeKind, string> = {
  request: 'relay request code',
  grant: 'relay grant code',
  return: 'relay return code',
};

class Reader {
  private at = 0;
  /** The code's version, read past its kind (readerOf). */
  version = RELAY_CODE_VERSION;
  constructor(
    private readonly data: Uint8Array,
    readonly what: string,
  ) {}
  private take(n: number, field: string): Uint8Array {
    if (this.at + n > this.data.length)
      throw new RelayCodeError(`the ${this.what} is cut short: ${field} is missing`);
    const out = this.data.slice(this.at, this.at + n);
    this.at += n;
    return out;
  }
  byte(field: string): number {
    return this.take(1, field)[0] as number;
  }
  u32(field: string): number {
    return Buffer.from(this.take(4, field)).readUInt32BE(0);
  }
  bytes(n: number, field: string): Uint8Array {
    return this.take(n, field);
  }
  uuid(field: string): string {
    const hex = Buffer.from(this.take(UUID_BYTES, field)).toString('hex');
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }
  optionalText(field: string): string | null {
    const length = this.byte(field);
    if (length === 0) return null;
    try {
      return fromUtf8.decode(this.take(length, field));
    } catch (error) {
      if (error instanceof RelayCodeError) throw error;
      throw new RelayCodeError(`the ${this.what}'s ${field} is not UTF-8`);
    }
  }
  text(field: string): string {
    const text = this.optionalText(field);
    if (text === null) throw new RelayCodeError(`the ${this.what}'s ${field} is empty`);
    return text;
  }
  end(): void {
    const left = this.data.length - this.at;
    if (left !== 0) throw new RelayCodeError(`the ${this.what} has ${left} bytes too many`);
  }
}

function bytesOfCode(code: string): Uint8Array {
  try {
    return decodeTyped(code);
  } catch (error) {
    if (error instanceof TypedCodeError) throw new RelayCodeError(error.message, error.group);
    throw error;
  }
}

/** A reader past the code's kind and version, which must be `kind`'s and this version. */
function readerOf(code: string, kind: RelayCodeKind): Reader {
  const bytes = bytesOfCode(code);
  const what = KIND_NAMES[kind];
  if (bytes.length > RELAY_CODE_MAX_BYTES) throw new RelayCodeError(`is longer than any ${what}`);
  const reader = new Reader(bytes, what);
  const found = reader.byte('its kind');
  if (found !== RELAY_CODE_KIND[kind]) {
    const other = (Object.keys(RELAY_CODE_KIND) as RelayCodeKind[]).find((k) => RELAY_CODE_KIND[k] === found);
    const named = other === undefined ? ACTIVATION_KINDS[found] : `a ${KIND_NAMES[other]}`;
    throw new RelayCodeError(
      named === undefined ? `this is not a Keyward ${what}` : `this is ${named}, not a ${what}`,
    );
  }
  const version = reader.byte('its version');
  if (version !== RELAY_CODE_VERSION && version !== RELAY_CODE_VERSION_SHARES) {
    throw new RelayCodeError(
      `this ${what} is of version ${version}; this reads versions ${RELAY_CODE_VERSION} and ${RELAY_CODE_VERSION_SHARES}`,
    );
  }
  reader.version = version;
  return reader;
}

function base64url(data: Uint8Array | string): string {
  return Buffer.from(data).toString('base64url');
}

/** The compact JWS as jose's SignJWT writes it: JSON.stringify of header and claims, in their order. */
function compactOf(header: Record<string, string>, claims: object, signature: Uint8Array): string {
  return `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}.${base64url(signature)}`;
}

function headerOf(kid: string, typ: string): Record<string, string> {
  return { alg: LEASE_ALGORITHM, kid, typ };
}

// ---------------------------------------------------------------------------------------------
// The relay request: self-contained, as the vendor knows nothing of the relay before it.

function requestBytes({ payload, signature }: TokenParts): Uint8Array {
  const relay = recordOf(payload.relay);
  const asks = recordOf(payload.asks);
  const licenses = listOf(asks.licenses);
  const shares = anyShares(licenses);
  const writer = start('request', shares)
    .text(textOf(payload.sub))
    .bytes(base64urlBytes(recordOf(relay.key).x, KEY_BYTES), KEY_BYTES)
    .text(textOf(relay.fingerprint))
    .u32(numberOf(payload.iat))
    .u32(numberOf(asks.until))
    .byte(licenses.length);
  for (const entry of licenses) {
    const license = recordOf(entry);
    const product = license.crmProductId === null ? null : textOf(license.crmProductId);
    writer.text(textOf(license.assetNum)).optionalText(product).u32(numberOf(license.seats));
    if (shares) writeShares(writer, license);
  }
  return writer.bytes(signature, SIGNATURE_BYTES).done();
}

/** The typed code of a relay request (`keyward relay init`), or null when it has none. */
export async function relayRequestCode(token: string): Promise<string | null> {
  return checkedCode(candidateOf(token, requestBytes), (code) => requestTokenOfCode(code));
}

/**
 * The relay request a typed code stands for, as the relay signed it: read it with readRelayRequest,
 * which checks it as it checks any request. Throws RelayCodeError when the code does not read.
 */
export async function requestTokenOfCode(code: string): Promise<string> {
  const reader = readerOf(code, 'request');
  const sub = reader.text('its relay id');
  const x = base64url(reader.bytes(KEY_BYTES, "the relay's key"));
  const fingerprint = reader.text("the relay's fingerprint");
  const iat = reader.u32('its time');
  const until = reader.u32('the end it asks for');
  const licenses: GrantedLicense[] = [];
  for (let i = reader.byte('its number of licenses'); i > 0; i -= 1) {
    licenses.push({
      assetNum: reader.text('a license'),
      crmProductId: reader.optionalText("a license's product"),
      seats: reader.u32("a license's seats"),
      ...readShares(reader),
    });
  }
  const signature = reader.bytes(SIGNATURE_BYTES, 'its signature');
  reader.end();
  const kid = await thumbprintOf({ kty: 'OKP', crv: 'Ed25519', x });
  const claims: RelayRequestClaims = {
    iss: RELAY_REQUEST_ISSUER,
    sub,
    iat,
    relay: { key: { kty: 'OKP', crv: 'Ed25519', x, kid }, fingerprint },
    asks: { licenses, until },
  };
  return compactOf(headerOf(kid, RELAY_REQUEST_TYP), claims, signature);
}

// ---------------------------------------------------------------------------------------------
// The pool grant: the relay that rebuilds it knows who it is, its key and its machine.

/** What a relay knows that a grant's code leaves out. */
export interface GrantCodeContext {
  /** The relay's id: the grant's `sub`. */
  relayId: string;
  /** The relay's public key, its kid its thumbprint (relayPublicJwk). */
  relayKey: RelayPublicJwk;
  fingerprint: string;
  /** The kids of the vendor's keys the relay trusts: the code names one by its first bytes. */
  vendorKids: readonly string[];
}

function grantBytes({ header, payload, signature }: TokenParts): Uint8Array {
  if (numberOf(payload.nbf) !== numberOf(payload.iat)) throw new NotCanonical();
  const licenses = listOf(payload.licenses);
  const shares = anyShares(licenses);
  const machines = payload.machines === null ? null : listOf(payload.machines);
  const overage = recordOf(payload.overage);
  const policy = OVERAGE_POLICIES.findIndex((p) => p === overage.policy);
  if (policy < 0) throw new NotCanonical();
  const writer = start('grant', shares)
    .bytes(prefixOf(textOf(header.kid)), KID_PREFIX_BYTES)
    .bytes(uuidBytes(payload.jti), UUID_BYTES)
    .u32(numberOf(payload.iat))
    .u32(numberOf(payload.exp))
    .byte(licenses.length);
  for (const entry of licenses) {
    const license = recordOf(entry);
    writer.text(textOf(license.assetNum)).text(textOf(license.crmProductId)).u32(numberOf(license.seats));
    if (shares) writeShares(writer, license);
  }
  writer.byte(machines === null ? 0 : machines.length + 1);
  for (const machine of machines ?? []) writer.text(textOf(machine));
  return writer.byte(policy).u32(numberOf(overage.seats)).bytes(signature, SIGNATURE_BYTES).done();
}

/** What the grant says of the relay it is for: its reader's context, to read the code back. */
function grantContextOf({ header, payload }: TokenParts): GrantCodeContext {
  const relay = recordOf(payload.relay);
  const key = recordOf(relay.key);
  if (key.kty !== 'OKP' || key.crv !== 'Ed25519') throw new NotCanonical();
  return {
    relayId: textOf(payload.sub),
    relayKey: { kty: 'OKP', crv: 'Ed25519', x: textOf(key.x), kid: textOf(key.kid) },
    fingerprint: textOf(relay.fingerprint),
    vendorKids: [textOf(header.kid)],
  };
}

/** The typed code of a pool grant, or null when it has none (nbf not its iat, too long, …). */
export function relayGrantCode(token: string): string | null {
  return checkedCodeSync(candidateOf(token, grantBytes), (code, parts) =>
    grantTokenOfCode(code, grantContextOf(parts)),
  );
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** The one vendor kid a code's prefix names: none or several, and the code cannot say whose it is. */
function vendorKidOf(prefix: Uint8Array, kids: readonly string[]): string {
  const matching = kids.filter((kid) => {
    try {
      return sameBytes(prefixOf(kid), prefix);
    } catch {
      return false;
    }
  });
  if (matching.length === 0) {
    throw new RelayCodeError("the relay grant code is signed by none of the vendor's keys this relay trusts");
  }
  if (matching.length > 1) {
    throw new RelayCodeError(
      "the relay grant code's key could be several of the vendor's keys: import the file",
    );
  }
  return matching[0] as string;
}

function grantLicenses(reader: Reader): GrantedLicense[] {
  const licenses: GrantedLicense[] = [];
  for (let i = reader.byte('its number of licenses'); i > 0; i -= 1) {
    licenses.push({
      assetNum: reader.text('a license'),
      crmProductId: reader.text("a license's product"),
      seats: reader.u32("a license's seats"),
      ...readShares(reader),
    });
  }
  return licenses;
}

function grantMachines(reader: Reader): string[] | null {
  const count = reader.byte('its machines');
  if (count === 0) return null;
  return Array.from({ length: count - 1 }, () => reader.text('a machine'));
}

/**
 * The pool grant a typed code stands for, as the vendor signed it, for the relay `context` says:
 * import it as the grant's file is imported (verifyPoolGrant checks it). A code rebuilt for
 * another relay is another token, whose signature fails. Throws RelayCodeError when it does not read.
 */
export function grantTokenOfCode(code: string, context: GrantCodeContext): string {
  const reader = readerOf(code, 'grant');
  const prefix = reader.bytes(KID_PREFIX_BYTES, "the vendor's key");
  const jti = reader.uuid('its id');
  const iat = reader.u32('its time');
  const exp = reader.u32('its end');
  const licenses = grantLicenses(reader);
  const machines = grantMachines(reader);
  const policy = OVERAGE_POLICIES[reader.byte('its overage policy')];
  const overageSeats = reader.u32('its overage seats');
  const signature = reader.bytes(SIGNATURE_BYTES, 'its signature');
  reader.end();
  if (policy === undefined) throw new RelayCodeError('the relay grant code names an unknown overage policy');
  const { kty, crv, x, kid } = context.relayKey;
  const claims: PoolGrantClaims = {
    iss: GRANT_ISSUER,
    sub: context.relayId,
    jti,
    iat,
    nbf: iat,
    exp,
    relay: { key: { kty, crv, x, kid }, fingerprint: context.fingerprint },
    licenses,
    machines,
    overage: { policy, seats: overageSeats },
  };
  return compactOf(headerOf(vendorKidOf(prefix, context.vendorKids), GRANT_TYP), claims, signature);
}

// ---------------------------------------------------------------------------------------------
// The return: the vendor reads whose grant it returns first, and so which relay key checks it.

function returnBytes({ payload, signature }: TokenParts): Uint8Array {
  const used = payload.used === undefined ? null : listOf(payload.used);
  const writer = start('return', used !== null)
    .text(textOf(payload.sub))
    .bytes(uuidBytes(payload.jti), UUID_BYTES)
    .u32(numberOf(payload.iat))
    .bytes(uuidBytes(payload.grant), UUID_BYTES);
  if (used !== null) {
    writer.byte(used.length);
    for (const entry of used) {
      const license = recordOf(entry);
      writer.text(textOf(license.assetNum)).text(textOf(license.crmProductId));
      writeShares(writer, license);
    }
  }
  return writer.bytes(signature, SIGNATURE_BYTES).done();
}

/** The typed code of a relay's return, or null when it has none (ids that are not UUIDs, …). */
export function relayReturnCode(token: string): string | null {
  return checkedCodeSync(candidateOf(token, returnBytes), (code, { header }) =>
    returnTokenOfCode(code, textOf(header.kid)),
  );
}

interface ReadReturn {
  claims: RelayReturnClaims;
  signature: Uint8Array;
}

function readReturn(code: string): ReadReturn {
  const reader = readerOf(code, 'return');
  const sub = reader.text('its relay id');
  const jti = reader.uuid('its id');
  const iat = reader.u32('its time');
  const grant = reader.uuid('its grant');
  const used: UsedShare[] | null = reader.version === RELAY_CODE_VERSION ? null : [];
  for (let i = used === null ? 0 : reader.byte('its use'); i > 0; i -= 1) {
    used?.push({
      assetNum: reader.text('a license'),
      crmProductId: reader.text("a license's product"),
      ...readShares(reader),
    });
  }
  const signature = reader.bytes(SIGNATURE_BYTES, 'its signature');
  reader.end();
  const claims: RelayReturnClaims = { iss: RELAY_REQUEST_ISSUER, sub, jti, iat, grant };
  return { claims: used === null ? claims : { ...claims, used }, signature };
}

/** Whose return a code is, read but not checked: the grant it names says which key checks it. */
export function peekReturnCode(code: string): { relayId: string; grantId: string; returnId: string } {
  const { claims } = readReturn(code);
  return { relayId: claims.sub, grantId: claims.grant, returnId: claims.jti };
}

/**
 * The return a typed code stands for, as the relay signed it with the key whose kid is `relayKid`
 * (the key its grant certifies): verify it as the return's file is verified. Throws RelayCodeError
 * when the code does not read.
 */
export function returnTokenOfCode(code: string, relayKid: string): string {
  const { claims, signature } = readReturn(code);
  return compactOf(headerOf(relayKid, RELAY_RETURN_TYP), claims, signature);
}
