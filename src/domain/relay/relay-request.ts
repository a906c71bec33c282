import { compactVerify, decodeProtectedHeader, importJWK, SignJWT } from 'jose';
import { LEASE_ALGORITHM, thumbprintOf, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import type { GrantedLicense, RelayPublicJwk } from './pool-grant.js';

/** The `typ` of a relay request's protected header. */
export const RELAY_REQUEST_TYP = 'keyward-relay-request+jwt';
/** The `iss` of every relay request: a relay, not a vendor, wrote it. */
export const RELAY_REQUEST_ISSUER = 'keyward-relay';

/** What a relay asks for: seats per license (lock asset number) and product, until when. */
export interface RelayAsks {
  licenses: GrantedLicense[];
  /** Seconds since the epoch: the end of the grant asked for. */
  until: number;
}

/**
 * A relay request (`keyward relay init`): the relay's id, its public key, the fingerprint of the
 * machine it runs on, and what it asks for. Signed with the relay's own key, the one it names, so
 * the vendor knows the request comes from whoever holds that key (a grant names the key it
 * certifies, and a copy of the request with another key in it fails its signature).
 */
export interface RelayRequestClaims {
  iss: typeof RELAY_REQUEST_ISSUER;
  /** The relay's id. */
  sub: string;
  /** Seconds since the epoch. */
  iat: number;
  relay: { key: RelayPublicJwk; fingerprint: string };
  asks: RelayAsks;
}

/** A request longer than this is no relay's (100 licenses of long numbers fit in a tenth of it). */
export const RELAY_REQUEST_MAX_CHARS = 65_536;
/** Licenses one request may ask for. */
export const RELAY_REQUEST_MAX_LICENSES = 100;
/** Seats of one license and product one request may ask for. */
export const RELAY_MAX_SEATS = 1_000_000;
/** The most seconds of use or units of amount one share may hold: a license's own limits' range. */
export const RELAY_MAX_SHARE = 2_147_483_647;
/** How old a request may be before the vendor asks the relay for a new one. */
export const RELAY_REQUEST_MAX_AGE_DAYS = 30;
/** How far ahead a grant may be asked for: renewal is the same exchange before the end. */
export const RELAY_GRANT_MAX_DAYS = 366;

const DAY_SECONDS = 86_400;
const ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const FINGERPRINT_PATTERN = /^[A-Za-z0-9+/=._:-]{8,128}$/;
const ASSET_NUM_MAX = 64;

/** A request that is not one, or not one the vendor can answer: the message names the field. */
export class RelayRequestError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RelayRequestError';
  }
}

/** Refuses a field of a relay's exchange file (a request, a report) with what is wrong with it. */
export function fail(field: string, what: string): never {
  throw new RelayRequestError(`${field}: ${what}`);
}

export function objectAt(value: unknown, field: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) fail(field, 'must be an object');
  return value as Record<string, unknown>;
}

export function textAt(value: unknown, field: string, pattern: RegExp): string {
  if (typeof value !== 'string' || !pattern.test(value)) fail(field, `must match ${pattern.source}`);
  return value;
}

export function wholeAt(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    fail(field, `must be a whole number from ${min} to ${max}`);
  }
  return value;
}

function licensesAt(value: unknown): GrantedLicense[] {
  const field = 'asks.licenses';
  if (!Array.isArray(value) || value.length === 0 || value.length > RELAY_REQUEST_MAX_LICENSES) {
    fail(field, `must list 1 to ${RELAY_REQUEST_MAX_LICENSES} licenses`);
  }
  const seen = new Set<string>();
  return value.map((entry, i) => {
    const at = `${field}[${i}]`;
    const license = objectAt(entry, at);
    const assetNum = license.assetNum;
    if (typeof assetNum !== 'string' || assetNum.trim() === '' || assetNum.length > ASSET_NUM_MAX) {
      fail(`${at}.assetNum`, `must be a lock's asset number of 1 to ${ASSET_NUM_MAX} characters`);
    }
    const product = license.crmProductId ?? null;
    if (product !== null && (typeof product !== 'string' || product.trim() === '' || product.length > 128)) {
      fail(`${at}.crmProductId`, 'must be a product id of 1 to 128 characters, or null for every product');
    }
    const key = `${assetNum}\u0000${product ?? ''}`;
    if (seen.has(key)) fail(at, 'asks for the same license and product twice');
    seen.add(key);
    return {
      assetNum,
      crmProductId: product,
      seats: wholeAt(license.seats, `${at}.seats`, 1, RELAY_MAX_SEATS),
      ...sharesAt(license, at),
    };
  });
}

/**
 * The shares of usage limits a license's ask carries (absent: none asked), in the order a grant
 * writes them, so a typed code rebuilds the same claims.
 */
export function sharesAt(
  license: Record<string, unknown>,
  at: string,
  min = 1,
): Pick<GrantedLicense, 'timeSeconds' | 'amount'> {
  return {
    ...(license.timeSeconds === undefined
      ? {}
      : { timeSeconds: wholeAt(license.timeSeconds, `${at}.timeSeconds`, min, RELAY_MAX_SHARE) }),
    ...(license.amount === undefined
      ? {}
      : { amount: wholeAt(license.amount, `${at}.amount`, min, RELAY_MAX_SHARE) }),
  };
}

/** The claims of a request checked field by field; `nowSeconds` bounds its age and its `until`. */
export function relayRequestClaims(payload: unknown, nowSeconds: number): RelayRequestClaims {
  const claims = objectAt(payload, 'request');
  if (claims.iss !== RELAY_REQUEST_ISSUER) fail('iss', `must be ${RELAY_REQUEST_ISSUER}`);
  const sub = textAt(claims.sub, 'sub', ID_PATTERN);
  const iat = wholeAt(claims.iat, 'iat', 0, Number.MAX_SAFE_INTEGER);
  if (iat > nowSeconds + DAY_SECONDS) fail('iat', 'is in the future: check the relay’s clock');
  if (iat < nowSeconds - RELAY_REQUEST_MAX_AGE_DAYS * DAY_SECONDS) {
    fail('iat', `is more than ${RELAY_REQUEST_MAX_AGE_DAYS} days old: run keyward relay init again`);
  }
  const relay = objectAt(claims.relay, 'relay');
  const key = objectAt(relay.key, 'relay.key');
  if (key.kty !== 'OKP' || key.crv !== 'Ed25519') fail('relay.key', 'must be an Ed25519 public key');
  const x = textAt(key.x, 'relay.key.x', /^[A-Za-z0-9_-]{43}$/);
  const kid = textAt(key.kid, 'relay.key.kid', /^[A-Za-z0-9_-]{43}$/);
  const fingerprint = textAt(relay.fingerprint, 'relay.fingerprint', FINGERPRINT_PATTERN);
  const asks = objectAt(claims.asks, 'asks');
  const licenses = licensesAt(asks.licenses);
  const until = wholeAt(asks.until, 'asks.until', 0, Number.MAX_SAFE_INTEGER);
  if (until <= nowSeconds) fail('asks.until', 'has passed');
  if (until > nowSeconds + RELAY_GRANT_MAX_DAYS * DAY_SECONDS) {
    fail('asks.until', `is more than ${RELAY_GRANT_MAX_DAYS} days ahead`);
  }
  return {
    iss: RELAY_REQUEST_ISSUER,
    sub,
    iat,
    relay: { key: { kty: 'OKP', crv: 'Ed25519', x, kid }, fingerprint },
    asks: { licenses, until },
  };
}

/** Signs a relay's request with the relay's own key, the one the claims name. */
export async function signRelayRequest(
  claims: RelayRequestClaims,
  relayKey: Ed25519PrivateJwk,
): Promise<string> {
  if (claims.relay.key.x !== relayKey.x) throw new Error('a relay request names the key that signs it');
  const key = await importJWK({ ...relayKey, alg: LEASE_ALGORITHM }, LEASE_ALGORITHM);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: LEASE_ALGORITHM, kid: claims.relay.key.kid, typ: RELAY_REQUEST_TYP })
    .sign(key);
}

/**
 * A relay request read and checked: its form, its claims, that the key it names is the key its
 * `kid` and thumbprint say, and that this key signed it. Throws RelayRequestError naming what is
 * wrong; answers nothing it did not check.
 */
export async function readRelayRequest(text: string, nowSeconds: number): Promise<RelayRequestClaims> {
  const token = text.trim();
  if (token.length === 0) fail('request', 'is empty');
  if (token.length > RELAY_REQUEST_MAX_CHARS)
    fail('request', `is longer than ${RELAY_REQUEST_MAX_CHARS} characters`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
    fail('request', 'is not a relay request (a compact JWS of three parts)');
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  let payload: unknown;
  try {
    header = decodeProtectedHeader(token);
    const part = token.split('.')[1] ?? '';
    payload = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    fail('request', 'is not a relay request (its header or payload is not JSON)');
  }
  if (header.typ !== RELAY_REQUEST_TYP)
    fail('request', `is not a relay request (typ is not ${RELAY_REQUEST_TYP})`);
  if (header.alg !== LEASE_ALGORITHM) fail('request', `must be signed with ${LEASE_ALGORITHM}`);
  const claims = relayRequestClaims(payload, nowSeconds);
  const named = claims.relay.key;
  if ((await thumbprintOf(named)) !== named.kid) fail('relay.key.kid', 'is not the thumbprint of relay.key');
  if (header.kid !== named.kid) fail('request', 'is signed with another key than the one it names');
  try {
    const key = await importJWK(
      { kty: 'OKP', crv: 'Ed25519', x: named.x, alg: LEASE_ALGORITHM },
      LEASE_ALGORITHM,
    );
    await compactVerify(token, key, { algorithms: [LEASE_ALGORITHM] });
  } catch {
    fail(
      'request',
      'has a signature that does not verify with the key it names (changed since the relay wrote it)',
    );
  }
  return claims;
}

/** What a relay used of one license's shares, as its return and its reports say. */
export interface UsedShare {
  assetNum: string;
  crmProductId: string;
  timeSeconds?: number;
  amount?: number;
}

/** A return or report says the use of at most as many licenses as a request may ask for. */
const USED_MAX = RELAY_REQUEST_MAX_LICENSES;

/** A return's or report's `used`, each field checked. */
export function usedSharesAt(value: unknown): UsedShare[] {
  if (!Array.isArray(value) || value.length > USED_MAX)
    fail('used', `must list at most ${USED_MAX} licenses`);
  return value.map((entry, i) => {
    const at = `used[${i}]`;
    const license = objectAt(entry, at);
    return {
      assetNum: textAt(license.assetNum, `${at}.assetNum`, /^.{1,64}$/s),
      crmProductId: textAt(license.crmProductId, `${at}.crmProductId`, /^.{1,128}$/s),
      // Zero is a use too; and use past the share is said as it was (a lease running when the
      // share ran out may have passed it by up to a heartbeat's time).
      ...sharesAt(license, at, 0),
    };
  });
}
