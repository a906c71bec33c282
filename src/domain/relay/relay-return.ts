import { importJWK, SignJWT } from 'jose';
import { LEASE_ALGORITHM, thumbprintOf, type Ed25519PrivateJwk } from '../runtime-keys/ed25519.js';
import {
  fail,
  objectAt,
  RELAY_REQUEST_ISSUER,
  textAt,
  usedSharesAt,
  wholeAt,
  type UsedShare,
} from './relay-request.js';

export type { UsedShare } from './relay-request.js';
import { readRelaySigned } from './relay-report.js';

/** The `typ` of a relay's return of its grant. */
export const RELAY_RETURN_TYP = 'keyward-relay-return+jwt';

/**
 * A relay's return (`keyward relay return`): the relay has stopped giving the grant's seats and
 * gives them back before the grant's end. Signed by the relay's key, so only the relay returns.
 */
export interface RelayReturnClaims {
  iss: typeof RELAY_REQUEST_ISSUER;
  sub: string;
  jti: string;
  iat: number;
  /** The grant returned. */
  grant: string;
  /**
   * The use the relay gave of each share of a usage limit its grant held (timeSeconds used,
   * amount drawn): the vendor gives the rest back to the license. Absent when the grant held none.
   */
  used?: UsedShare[];
}

export async function signRelayReturn(claims: RelayReturnClaims, key: Ed25519PrivateJwk): Promise<string> {
  const signing = await importJWK({ ...key, alg: LEASE_ALGORITHM }, LEASE_ALGORITHM);
  return new SignJWT({ ...claims })
    .setProtectedHeader({ alg: LEASE_ALGORITHM, kid: await thumbprintOf(key), typ: RELAY_RETURN_TYP })
    .sign(signing);
}

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** A return read (not yet verified: its grant says whose key checks it), each field checked. */
export function unverifiedReturn(text: string): { token: string; claims: RelayReturnClaims } {
  const { token, payload } = readRelaySigned(text, 'return', RELAY_RETURN_TYP, 32_768);
  const claims = objectAt(payload, 'return');
  if (claims.iss !== RELAY_REQUEST_ISSUER) fail('iss', `must be ${RELAY_REQUEST_ISSUER}`);
  return {
    token,
    claims: {
      iss: RELAY_REQUEST_ISSUER,
      sub: textAt(claims.sub, 'sub', ID),
      jti: textAt(claims.jti, 'jti', ID),
      iat: wholeAt(claims.iat, 'iat', 0, Number.MAX_SAFE_INTEGER),
      grant: textAt(claims.grant, 'grant', ID),
      ...(claims.used === undefined ? {} : { used: usedSharesAt(claims.used) }),
    },
  };
}
