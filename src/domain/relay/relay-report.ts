import { compactVerify, decodeProtectedHeader, importJWK, SignJWT } from 'jose';
import { LEASE_ALGORITHM, thumbprintOf, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import type { RelayPublicJwk } from './pool-grant.js';
import {
  fail,
  objectAt,
  RELAY_REQUEST_ISSUER,
  textAt,
  usedSharesAt,
  wholeAt,
  type UsedShare,
} from './relay-request.js';

/** The `typ` of a usage report's protected header. */
export const RELAY_REPORT_TYP = 'keyward-relay-report+jwt';
/** A report is at most this long: 100 licenses' hours of 90 days, with room. */
export const RELAY_REPORT_MAX_CHARS = 8 * 1024 * 1024;
/** Hour rows one report may hold: 90 days of 100 licenses. */
export const RELAY_REPORT_MAX_HOURS = 90 * 24 * 100;
const HOUR_MS = 3_600_000;

/** One license's hour at the relay. */
export interface ReportedHour {
  /** The hour's start, milliseconds since the epoch (a whole UTC hour). */
  at: number;
  assetNum: string;
  crmProductId: string;
  /** The most seats held at one instant in the hour. */
  peakSeats: number;
  /** Seats' time in the hour, in milliseconds. */
  seatMs: number;
  /** Refused check-outs by code (`90005`: every seat in use). */
  refusals: Record<string, number>;
  /** Seats past the grant's, under an overage allowance. */
  overage: number;
}

/**
 * A relay's usage report (`keyward relay report`): its hours since it started, per license and
 * product, and a digest of its own audit trail, signed by the relay's key (the one its grants
 * certify) so the vendor knows whose it is and that nothing was changed on the way.
 */
export interface RelayReportClaims {
  iss: typeof RELAY_REQUEST_ISSUER;
  /** The relay's id. */
  sub: string;
  /** The report's id: imported once. */
  jti: string;
  /** Seconds since the epoch. */
  iat: number;
  /** The grant the relay served when it wrote the report. */
  grant: string;
  hours: ReportedHour[];
  /** The relay's audit trail: how many entries, and the SHA-256 of the whole (hex). */
  audit: { entries: number; digest: string };
  /** What the relay had used of each share of a usage limit its grant holds; absent for none. */
  used?: UsedShare[];
}

export async function signRelayReport(claims: RelayReportClaims, key: Ed25519PrivateJwk): Promise<string> {
  const signing = await importJWK({ ...key, alg: LEASE_ALGORITHM }, LEASE_ALGORITHM);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: LEASE_ALGORITHM, kid: await thumbprintOf(key), typ: RELAY_REPORT_TYP })
    .sign(signing);
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const PRODUCT = /^.{1,128}$/s;

function hoursAt(value: unknown): ReportedHour[] {
  if (!Array.isArray(value) || value.length > RELAY_REPORT_MAX_HOURS) {
    fail('hours', `must list at most ${RELAY_REPORT_MAX_HOURS} hours`);
  }
  return value.map((entry, i) => {
    const at = `hours[${i}]`;
    const hour = objectAt(entry, at);
    const start = wholeAt(hour.at, `${at}.at`, 0, Number.MAX_SAFE_INTEGER);
    if (start % HOUR_MS !== 0) fail(`${at}.at`, 'must be the start of an hour');
    const refusals = objectAt(hour.refusals ?? {}, `${at}.refusals`);
    const counted: Record<string, number> = {};
    for (const [code, n] of Object.entries(refusals)) {
      if (!/^9\d{4}$/.test(code)) fail(`${at}.refusals`, `has ${code}, which is no runtime code`);
      counted[code] = wholeAt(n, `${at}.refusals.${code}`, 0, 1_000_000_000);
    }
    return {
      at: start,
      assetNum: textAt(hour.assetNum, `${at}.assetNum`, /^.{1,64}$/s),
      crmProductId: textAt(hour.crmProductId, `${at}.crmProductId`, PRODUCT),
      peakSeats: wholeAt(hour.peakSeats, `${at}.peakSeats`, 0, 1_000_000),
      seatMs: wholeAt(hour.seatMs, `${at}.seatMs`, 0, 1_000_000 * HOUR_MS),
      refusals: counted,
      overage: wholeAt(hour.overage ?? 0, `${at}.overage`, 0, 1_000_000),
    };
  });
}

/** A report's claims checked field by field (the signature is checked apart: readRelayReport). */
export function relayReportClaims(payload: unknown): RelayReportClaims {
  const claims = objectAt(payload, 'report');
  if (claims.iss !== RELAY_REQUEST_ISSUER) fail('iss', `must be ${RELAY_REQUEST_ISSUER}`);
  const audit = objectAt(claims.audit, 'audit');
  return {
    iss: RELAY_REQUEST_ISSUER,
    sub: textAt(claims.sub, 'sub', ID),
    jti: textAt(claims.jti, 'jti', ID),
    iat: wholeAt(claims.iat, 'iat', 0, Number.MAX_SAFE_INTEGER),
    grant: textAt(claims.grant, 'grant', ID),
    hours: hoursAt(claims.hours),
    audit: {
      entries: wholeAt(audit.entries, 'audit.entries', 0, Number.MAX_SAFE_INTEGER),
      digest: textAt(audit.digest, 'audit.digest', /^[0-9a-f]{64}$/),
    },
    ...(claims.used === undefined ? {} : { used: usedSharesAt(claims.used) }),
  };
}

/**
 * A relay's signed file (a report, a return) read without checking its signature: its form, its
 * type and algorithm, and its payload as JSON. Whose key checks it is named inside it.
 */
export function readRelaySigned(
  text: string,
  what: string,
  typ: string,
  maxChars: number,
): { token: string; payload: unknown } {
  const token = text.trim();
  if (token.length === 0) fail(what, 'is empty');
  if (token.length > maxChars) fail(what, `is longer than ${maxChars} characters`);
  if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token)) {
    fail(what, `is not a relay ${what} (a compact JWS of three parts)`);
  }
  let header: ReturnType<typeof decodeProtectedHeader>;
  let payload: unknown;
  try {
    header = decodeProtectedHeader(token);
    payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8'));
  } catch {
    fail(what, `is not a relay ${what} (its header or payload is not JSON)`);
  }
  if (header.typ !== typ) fail(what, `is not a relay ${what} (typ is not ${typ})`);
  if (header.alg !== LEASE_ALGORITHM) fail(what, `must be signed with ${LEASE_ALGORITHM}`);
  return { token, payload };
}

/** The relay a report says it is from, read without checking it: whose key to check it with. */
export function unverifiedReport(text: string): { token: string; claims: RelayReportClaims } {
  const { token, payload } = readRelaySigned(text, 'report', RELAY_REPORT_TYP, RELAY_REPORT_MAX_CHARS);
  return { token, claims: relayReportClaims(payload) };
}

/** Checks a relay's signed file (`what`: report, return) with the relay key a grant certified. */
export async function verifyRelaySigned(token: string, key: RelayPublicJwk, what: string): Promise<void> {
  if (decodeProtectedHeader(token).kid !== key.kid) {
    fail(what, "is signed with another key than the relay's grant certifies");
  }
  try {
    const publicKey = await importJWK(
      { kty: 'OKP', crv: 'Ed25519', x: key.x, alg: LEASE_ALGORITHM },
      LEASE_ALGORITHM,
    );
    await compactVerify(token, publicKey, { algorithms: [LEASE_ALGORITHM] });
  } catch {
    fail(
      what,
      "has a signature that does not verify with the relay's key (changed since the relay wrote it)",
    );
  }
}
