import {
  createLocalJWKSet,
  createRemoteJWKSet,
  errors,
  jwtVerify,
  type JSONWebKeySet,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { KeywardLeaseError, type LeaseFailure } from './errors.js';
import { LEASE_EXP_BOUNDS, LEASE_ISSUER, LEASE_TYP, type OfflineLeaseClaims } from './lease-claims.js';

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

function keySetOf(keys: LeaseKeys): JWTVerifyGetKey {
  if ('jwks' in keys) return createLocalJWKSet(keys.jwks);
  let keySet = remoteKeySets.get(keys.jwksUrl);
  if (keySet === undefined) {
    keySet = createRemoteJWKSet(new URL(keys.jwksUrl));
    remoteKeySets.set(keys.jwksUrl, keySet);
  }
  return keySet;
}

function reasonOf(error: unknown, remote: boolean): LeaseFailure | undefined {
  if (error instanceof errors.JWTExpired) return 'expired';
  if (error instanceof errors.JWTClaimValidationFailed) {
    // A required claim that is absent is a malformed lease, whichever claim it is.
    if (error.reason === 'missing') return 'malformed';
    if (error.claim === 'nbf') return 'not-yet-valid';
    return 'malformed';
  }
  // Another algorithm (none, HS256…) is no signature of a Keyward key, whatever the token claims.
  if (error instanceof errors.JWSSignatureVerificationFailed || error instanceof errors.JOSEAlgNotAllowed) {
    return 'signature';
  }
  if (error instanceof errors.JWKSNoMatchingKey || error instanceof errors.JWKSMultipleMatchingKeys) {
    return 'unknown-key';
  }
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'malformed';
  if (error instanceof errors.JOSENotSupported) return 'malformed';
  // Anything else while fetching the key set: the network, an answer that is no JWKS, a timeout.
  return remote ? 'jwks-unavailable' : undefined;
}

const isText = (value: unknown): value is string => typeof value === 'string';
const isTimeOrNull = (value: unknown): value is number | null =>
  value === null || (typeof value === 'number' && Number.isFinite(value));
// Absent from leases signed before the claim existed; anything else is no lease of ours.
const isExpBoundOrAbsent = (value: unknown): boolean =>
  value === undefined || (LEASE_EXP_BOUNDS as readonly unknown[]).includes(value);
const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The claims past the signature's check, when they have the lease's shape. */
function asLeaseClaims(payload: JWTPayload): OfflineLeaseClaims | undefined {
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

/**
 * Verifies an offline lease where the software runs, without calling the server: an EdDSA
 * signature by a key of the JWKS, issuer `keyward`, header `typ` `keyward-lease+jwt`, `nbf` and
 * `exp` around `now`, the machine's fingerprint, the license not ended and, when given, the
 * application's appKey. Resolves to the lease's claims; rejects with `KeywardLeaseError`, whose
 * `reason` says why.
 *
 * The checks run in this order and the first that fails answers, as every SDK checks them
 * (sdks/conformance/README.md): the signature and its key; the JWT claims (issuer, type, required
 * claims present, `nbf`, `exp`); then the audience; then the claims' shape (`malformed`); then the
 * machine (`fingerprint`); then the license's end (`license-ended`). So a
 * forged or stale lease never says anything about a machine or a license, and a lease for another
 * machine never says whether its license still runs.
 */
export async function verifyLease(token: string, options: VerifyLeaseOptions): Promise<OfflineLeaseClaims> {
  const nowMs = (options.now ?? new Date()).getTime();
  const keySet = keySetOf(options);
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, keySet, {
      algorithms: ['EdDSA'],
      issuer: LEASE_ISSUER,
      typ: LEASE_TYP,
      requiredClaims: ['sub', 'jti', 'aud', 'iat', 'nbf', 'exp'],
      // The audience is compared below, after the times: jose would compare it first.
      ...(options.now === undefined ? {} : { currentDate: options.now }),
    }));
  } catch (error) {
    const reason = reasonOf(error, 'jwksUrl' in options);
    if (reason === undefined) throw error;
    throw new KeywardLeaseError(reason, `lease refused (${reason}): ${(error as Error).message}`, {
      cause: error,
    });
  }
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
