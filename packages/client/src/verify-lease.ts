import {
  compactVerify,
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  importJWK,
  type CryptoKey,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
} from 'jose';
import { KeywardLeaseError, type LeaseFailure } from './errors.js';
import { LEASE_EXP_BOUNDS, LEASE_ISSUER, LEASE_TYP, type OfflineLeaseClaims } from './lease-claims.js';
import { GRANT_HEADER, GRANT_TYP, type PoolGrantClaims, type RelayPublicJwk } from './pool-grant.js';

// WebCrypto and fetch only, nothing of Node: this file runs in browsers as well.

/** Where the keys come from: a key set the software holds, or the server's JWKS URL. */
export type LeaseKeys = { jwks: JSONWebKeySet } | { jwksUrl: string };

export type VerifyLeaseOptions = LeaseKeys & {
  /** This machine's fingerprint: a lease checked out for another machine is refused. */
  fingerprint: string;
  /** The appKey the lease must be for; unchecked when left out. */
  audience?: string;
  /** The time to check `nbf` and `exp` against; now when left out (for tests). */
  now?: Date;
};

/**
 * One key set per URL for the process: jose keeps it cached, and fetches it again only for a kid
 * it does not know (a rotation) or once the cache is old.
 */
const remoteKeySets = new Map<string, JWTVerifyGetKey>();

/**
 * A saved key set's imported keys, per key set object: jose imports a key on first use and keeps it
 * in the set it made, so a set made anew for each call imported the key every time (a lease
 * checked before each feature paid that each time).
 */
const localKeySets = new WeakMap<object, JWTVerifyGetKey>();

function keySetOf(keys: LeaseKeys): JWTVerifyGetKey {
  if ('jwks' in keys) {
    let local = localKeySets.get(keys.jwks);
    if (local === undefined) {
      local = createLocalJWKSet(keys.jwks);
      localKeySets.set(keys.jwks, local);
    }
    return local;
  }
  let keySet = remoteKeySets.get(keys.jwksUrl);
  if (keySet === undefined) {
    keySet = createRemoteJWKSet(new URL(keys.jwksUrl));
    remoteKeySets.set(keys.jwksUrl, keySet);
  }
  return keySet;
}

function reasonOf(error: unknown, remote: boolean): LeaseFailure | undefined {
  // Another algorithm (none, HS256…) is no signature of a Keyward key, whatever the token claims.
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) {
    return 'signature';
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return 'unknown-key';
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JOSENotSupported) return 'malformed';
  // Anything else while fetching the key set: the network, an answer that is no JWKS, a timeout.
  return remote ? 'jwks-unavailable' : undefined;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * The bytes of one segment of a compact JWS, when the segment is exactly their unpadded base64url:
 * its alphabet only (no `=`, `+`, `/`, whitespace or line break) and its unused last bits zero, so
 * one token has one text (RFC 4648 §3.5, RFC 7515 §2). undefined otherwise.
 */
function segmentBytes(text: string): Uint8Array | undefined {
  if (text.length % 4 === 1) return undefined;
  const bytes = new Uint8Array(Math.floor((text.length * 3) / 4));
  let bits = 0;
  let held = 0;
  let at = 0;
  for (const char of text) {
    const value = BASE64URL.indexOf(char);
    if (value < 0 || char.length !== 1) return undefined;
    held = (held << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      bytes[at++] = (held >> bits) & 0xff;
      held &= (1 << bits) - 1;
    }
  }
  return held === 0 ? bytes : undefined;
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Whether an object of this JSON text (one `JSON.parse` read) names a member twice, the names
 * compared unescaped. `JSON.parse` keeps the last of them, another parser the first: such a lease
 * would say one thing here and another there, so it is no lease.
 */
function namesAMemberTwice(text: string): boolean {
  const open: (Set<string> | undefined)[] = []; // the names of each open object; undefined: an array
  let nameNext = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i];
    if (char === '"') {
      const start = i;
      for (i++; text[i] !== '"'; i++) if (text[i] === '\\') i++;
      const names = open[open.length - 1];
      if (nameNext && names !== undefined) {
        const name = JSON.parse(text.slice(start, i + 1)) as string;
        if (names.has(name)) return true;
        names.add(name);
      }
      nameNext = false;
    } else if (char === '{') {
      open.push(new Set());
      nameNext = true;
    } else if (char === '[') {
      open.push(undefined);
      nameNext = false;
    } else if (char === '}' || char === ']') {
      open.pop();
      nameNext = false;
    } else if (char === ',') {
      nameNext = open[open.length - 1] !== undefined;
    }
  }
  return false;
}

/** A segment's bytes as a JSON object: UTF-8 (no byte order mark), each name once. */
function jsonObjectOf(bytes: Uint8Array): Record<string, unknown> | undefined {
  try {
    const text = utf8.decode(bytes);
    const value: unknown = JSON.parse(text);
    return isObject(value) && !namesAMemberTwice(text) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The first of verifyLease's checks, before any key, of a lease or of the pool grant a relay's
 * lease carries: three segments, each exactly base64url, the header and the payload JSON objects
 * with each name once, and no `crit` in the header (neither uses an extension, RFC 7515 §4.1.11).
 */
function compactParts(
  token: unknown,
  what: 'lease' | 'grant' = 'lease',
): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  const parts = typeof token === 'string' ? token.split('.') : [];
  const [header, payload, signature] = parts.map(segmentBytes);
  const headerJson = header === undefined ? undefined : jsonObjectOf(header);
  const payloadJson = payload === undefined ? undefined : jsonObjectOf(payload);
  const about = what === 'lease' ? '' : 'its grant has ';
  if (
    parts.length !== 3 ||
    signature === undefined ||
    headerJson === undefined ||
    payloadJson === undefined
  ) {
    throw new KeywardLeaseError(
      'malformed',
      `lease refused (malformed): ${about}not three base64url segments, or a header or payload that is no JSON object`,
    );
  }
  if (Object.hasOwn(headerJson, 'crit')) {
    throw new KeywardLeaseError(
      'malformed',
      `lease refused (malformed): ${what === 'lease' ? 'its' : "its grant's"} header names critical extensions`,
    );
  }
  return { header: headerJson, payload: payloadJson };
}

/** RFC 7515 §4.1.9: a media type compares without case, and `application/` may be left out. */
function typMatches(typ: unknown, expected: string = LEASE_TYP): boolean {
  if (typeof typ !== 'string') return false;
  const lower = typ.toLowerCase();
  return (lower.startsWith('application/') ? lower.slice('application/'.length) : lower) === expected;
}

/** The latest time a lease may name: 9999-12-31T23:59:59Z, in seconds. */
const LAST_SECOND = 253_402_300_799;

/** A time claim: a whole number of seconds from 1970 to the end of year 9999. */
const isWholeSeconds = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= LAST_SECOND;

const isText = (value: unknown): value is string => typeof value === 'string';
const isTimeOrNull = (value: unknown): value is number | null =>
  value === null || (typeof value === 'number' && Number.isFinite(value));
// Absent from leases signed before the claim existed; anything else is no lease of ours.
const isExpBoundOrAbsent = (value: unknown): boolean =>
  value === undefined || (LEASE_EXP_BOUNDS as readonly unknown[]).includes(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The claims past the signature's check, when they have the lease's shape. */
function asLeaseClaims(payload: Record<string, unknown>): OfflineLeaseClaims | undefined {
  const holder = payload.holder;
  const holderOk =
    isObject(holder) &&
    ((holder.kind === 'member' && isText(holder.memberGlobalId) && isText(holder.enterpriseGlobalId)) ||
      (holder.kind === 'lock' && isText(holder.assetNum)));
  const ok =
    holderOk &&
    isText(payload.sub) &&
    isText(payload.jti) &&
    isText(payload.aud) &&
    isText(payload.fingerprint) &&
    isText(payload.assetNum) &&
    isObject(payload.product) &&
    isObject(payload.limits) &&
    isTimeOrNull(payload.limits.endDate) &&
    isExpBoundOrAbsent(payload.expBound);
  return ok ? (payload as unknown as OfflineLeaseClaims) : undefined;
}

/** An Ed25519 public key: exactly the unpadded base64url of 32 bytes. */
const isEd25519X = (value: unknown): value is string =>
  typeof value === 'string' && value.length === 43 && segmentBytes(value)?.length === 32;

const isRelayKey = (value: unknown): value is RelayPublicJwk =>
  isObject(value) &&
  value.kty === 'OKP' &&
  value.crv === 'Ed25519' &&
  isEd25519X(value.x) &&
  isText(value.kid);

const isSeats = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= 1_000_000_000;

/** A pool grant's claims past its signature's check, when they have the grant's shape. */
function asGrantClaims(payload: Record<string, unknown>): PoolGrantClaims | undefined {
  const { relay, licenses, machines } = payload;
  const ok =
    payload.iss === LEASE_ISSUER &&
    isText(payload.sub) &&
    isText(payload.jti) &&
    isWholeSeconds(payload.iat) &&
    isWholeSeconds(payload.nbf) &&
    isWholeSeconds(payload.exp) &&
    isObject(relay) &&
    isRelayKey(relay.key) &&
    isText(relay.fingerprint) &&
    Array.isArray(licenses) &&
    licenses.length > 0 &&
    licenses.every(
      (l) =>
        isObject(l) &&
        isText(l.assetNum) &&
        (l.crmProductId === null || isText(l.crmProductId)) &&
        isSeats(l.seats),
    ) &&
    (machines === undefined || machines === null || (Array.isArray(machines) && machines.every(isText)));
  return ok ? (payload as unknown as PoolGrantClaims) : undefined;
}

/** Relay keys already imported, by their x: a relay signs with one key for its grant's life. */
const relayKeys = new Map<string, CryptoKey>();

async function relayKeyOf(jwk: RelayPublicJwk): Promise<CryptoKey> {
  let key = relayKeys.get(jwk.x);
  if (key === undefined) {
    const imported = await importJWK({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, 'EdDSA');
    if (imported instanceof Uint8Array) throw new Error('an Ed25519 JWK imported as a secret');
    key = imported;
    if (relayKeys.size >= 16) relayKeys.delete(relayKeys.keys().next().value as string);
    relayKeys.set(jwk.x, key);
  }
  return key;
}

type Refuse = (reason: LeaseFailure, why: string) => KeywardLeaseError;

/** compactVerify, its failures said as a lease's reasons. */
async function verifiedBy(
  token: string,
  keys: JWTVerifyGetKey,
  remote: boolean,
  what: string,
): Promise<void> {
  try {
    await compactVerify(token, keys, { algorithms: ['EdDSA'] });
  } catch (error) {
    const reason = reasonOf(error, remote);
    if (reason === undefined) throw error;
    throw new KeywardLeaseError(reason, `lease refused (${reason}): ${what}${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * The pool grant a relay's lease carries, checked as a lease is up to its times: its form, a
 * vendor key of the set and its signature, its type and claims, then its period. Its relay key is
 * then the only key the lease may be signed with.
 */
async function verifiedGrant(
  token: unknown,
  keySet: JWTVerifyGetKey,
  remote: boolean,
  nowSeconds: number,
  refuse: Refuse,
): Promise<PoolGrantClaims> {
  const { header, payload } = compactParts(token, 'grant');
  if (header.alg !== 'EdDSA') throw refuse('signature', 'its grant is not signed with EdDSA');
  if (typeof header.kid !== 'string') throw refuse('unknown-key', 'its grant names no key (kid)');
  await verifiedBy(token as string, keySet, remote, 'its grant: ');
  if (!typMatches(header.typ, GRANT_TYP)) throw refuse('malformed', `its grant's typ is not ${GRANT_TYP}`);
  const grant = asGrantClaims(payload);
  if (grant === undefined) throw refuse('malformed', "its grant's claims are not a pool grant");
  if (grant.nbf > nowSeconds) throw refuse('not-yet-valid', `its grant is valid from ${grant.nbf}`);
  if (grant.exp <= nowSeconds) throw refuse('grant-expired', `its grant ended at ${grant.exp}`);
  return grant;
}

/** Why a relay's lease says more than its grant lets the relay give, or undefined when it does not. */
function beyondGrant(claims: OfflineLeaseClaims, grant: PoolGrantClaims): string | undefined {
  if (claims.exp > grant.exp) return 'it runs past its grant';
  const license = grant.licenses.find(
    (l) => l.assetNum === claims.assetNum && l.crmProductId === claims.product.crmProductId,
  );
  if (license === undefined) return 'its license and product are not in its grant';
  // Anything but a number within the grant is more: a lease without a seat limit is unlimited.
  const seats: unknown = claims.limits.concurrent;
  if (typeof seats !== 'number' || seats > license.seats) return 'it names more seats than its grant gives';
  if (
    grant.machines !== null &&
    grant.machines !== undefined &&
    !grant.machines.includes(claims.fingerprint)
  ) {
    return "its machine is not on its grant's list";
  }
  return undefined;
}

/**
 * Verifies a pool grant on its own, as a relay's lease's grant is verified (its form, a key of the
 * vendor's set, its signature, its type and claims, its period): for a relay importing the grant
 * it was answered, so the relay accepts exactly what the machines behind it will. Resolves to the
 * grant's claims; rejects with `KeywardLeaseError` (`grant-expired` once it ended).
 */
export async function verifyPoolGrant(
  token: string,
  options: LeaseKeys & { now?: Date },
): Promise<PoolGrantClaims> {
  const nowSeconds = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const refuse = (reason: LeaseFailure, why: string) =>
    new KeywardLeaseError(reason, `grant refused (${reason}): ${why}`);
  return verifiedGrant(token, keySetOf(options), 'jwksUrl' in options, nowSeconds, refuse);
}

/**
 * Verifies an offline lease where the software runs, without calling the server: an EdDSA
 * signature by a key of the JWKS, issuer `keyward`, header `typ` `keyward-lease+jwt`, `nbf` and
 * `exp` around `now`, the machine's fingerprint, the license not ended and, when given, the
 * application's appKey. Resolves to the lease's claims; rejects with `KeywardLeaseError`, whose
 * `reason` says why.
 *
 * The checks run in this order and the first that fails answers, as every SDK checks them
 * (sdks/conformance/README.md): the token's form (`malformed`: three segments each exactly
 * base64url, header and payload JSON objects naming each member once, no `crit`); `alg` EdDSA
 * (`signature`); a key of the set with the header's `kid` (`unknown-key`); the signature; the JWT
 * claims (type, issuer, required claims present, `sub`, `jti`, `aud` strings, `iat`, `nbf`, `exp`
 * whole seconds up to the end of year 9999: `malformed`), `nbf`, `exp`; then the audience; then the
 * claims' shape (`malformed`); then the machine (`fingerprint`); then the license's end
 * (`license-ended`). So a forged or stale lease never says anything about a machine or a license,
 * and a lease for another machine never says whether its license still runs.
 *
 * A relay's lease carries its pool grant in its header (`grant`): after `alg`, the grant is checked
 * as a lease is (its form, a vendor key of the set, its signature, its type and claims, its `nbf`,
 * then its end: `grant-expired`), and the lease must then be signed by the relay key the grant
 * certifies (`unknown-key` for another kid). Past the lease's claims' shape, it must not say more
 * than the grant gives (`beyond-grant`: its `exp`, license and product, seats, machine).
 */
export async function verifyLease(token: string, options: VerifyLeaseOptions): Promise<OfflineLeaseClaims> {
  const nowMs = (options.now ?? new Date()).getTime();
  const nowSeconds = Math.floor(nowMs / 1000);
  const keySet = keySetOf(options);
  const refuse = (reason: LeaseFailure, why: string) =>
    new KeywardLeaseError(reason, `lease refused (${reason}): ${why}`);
  const { header, payload } = compactParts(token);
  if (header.alg !== 'EdDSA') throw refuse('signature', 'it is not signed with EdDSA');
  const remote = 'jwksUrl' in options;
  // A relay's lease: its grant is checked first, and certifies the one key that may have signed it.
  const grant = Object.hasOwn(header, GRANT_HEADER)
    ? await verifiedGrant(header[GRANT_HEADER], keySet, remote, nowSeconds, refuse)
    : undefined;
  // A key is chosen by kid alone: without one, no key is tried.
  if (typeof header.kid !== 'string') throw refuse('unknown-key', 'its header names no key (kid)');
  if (grant === undefined) await verifiedBy(token, keySet, remote, '');
  else if (header.kid !== grant.relay.key.kid) {
    throw refuse('unknown-key', 'it is not signed by the relay key its grant certifies');
  } else {
    // 32 bytes that are no point of the curve: no signature can be of that key.
    const relayKey = await relayKeyOf(grant.relay.key).catch((error: unknown) => {
      throw new KeywardLeaseError(
        'signature',
        "lease refused (signature): its grant's relay key is no Ed25519 key",
        {
          cause: error,
        },
      );
    });
    await verifiedBy(token, async () => relayKey, remote, '');
  }
  // Signed by a key of the set: the claims may be read.
  if (!typMatches(header.typ)) throw refuse('malformed', `its typ is not ${LEASE_TYP}`);
  if (payload.iss !== LEASE_ISSUER) throw refuse('malformed', `its iss is not ${LEASE_ISSUER}`);
  for (const claim of ['sub', 'jti', 'aud', 'iat', 'nbf', 'exp']) {
    if (!Object.hasOwn(payload, claim)) throw refuse('malformed', `the ${claim} claim is missing`);
  }
  for (const claim of ['sub', 'jti', 'aud']) {
    if (!isText(payload[claim])) throw refuse('malformed', `the ${claim} claim is not a string`);
  }
  for (const claim of ['iat', 'nbf', 'exp']) {
    if (!isWholeSeconds(payload[claim])) {
      throw refuse('malformed', `the ${claim} claim is not whole seconds from 0 to ${LAST_SECOND}`);
    }
  }
  if ((payload.nbf as number) > nowSeconds)
    throw refuse('not-yet-valid', `it is valid from ${String(payload.nbf)}`);
  if ((payload.exp as number) <= nowSeconds) throw refuse('expired', `it expired at ${String(payload.exp)}`);
  if (options.audience !== undefined && payload.aud !== options.audience) {
    throw new KeywardLeaseError(
      'audience',
      `lease refused (audience): it was checked out by another application than ${options.audience}`,
    );
  }
  const claims = asLeaseClaims(payload);
  if (claims === undefined) {
    throw new KeywardLeaseError(
      'malformed',
      'lease refused (malformed): its claims are not an offline lease',
    );
  }
  const beyond = grant === undefined ? undefined : beyondGrant(claims, grant);
  if (beyond !== undefined) throw refuse('beyond-grant', beyond);
  if (claims.fingerprint !== options.fingerprint) {
    throw new KeywardLeaseError(
      'fingerprint',
      'lease refused (fingerprint): it was checked out for another machine',
    );
  }
  // A lease signed before the server bounded `exp` by the license's end may outlive the license;
  // the end date it carries still holds, as the server's own check-out judges it.
  const endDate = claims.limits.endDate;
  if (endDate !== null && nowMs > endDate) {
    throw new KeywardLeaseError(
      'license-ended',
      `lease refused (license-ended): the license ended at ${new Date(endDate).toISOString()}`,
    );
  }
  return claims;
}
