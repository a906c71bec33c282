import { importJWK, SignJWT } from 'jose';
import {
  LEASE_ALGORITHM,
  thumbprintOf,
  type Ed25519PrivateJwk,
  type Ed25519PublicJwk,
} from '../runtime-keys/ed25519.js';
import { LEASE_TYP, type OfflineLeaseClaims } from '../runtime/lease-claims.js';
import { GRANT_HEADER, type RelayPublicJwk } from './pool-grant.js';

/**
 * The relay's key as its pool grant names it: the public half, and its RFC 7638 thumbprint as the
 * kid its leases carry.
 */
export async function relayPublicJwk(key: Ed25519PublicJwk): Promise<RelayPublicJwk> {
  return { kty: 'OKP', crv: 'Ed25519', x: key.x, kid: await thumbprintOf(key) };
}

/**
 * A lease signed by a relay: EdDSA with the relay's own key, its kid the key's thumbprint, and the
 * pool grant that certifies that key in the header, so software verifies it with the vendor's
 * JWKS alone (packages/client, verifyLease).
 */
export async function signRelayLease(
  claims: OfflineLeaseClaims,
  relayKey: Ed25519PrivateJwk,
  grantToken: string,
): Promise<string> {
  const key = await importJWK({ ...relayKey, alg: LEASE_ALGORITHM }, LEASE_ALGORITHM);
  return new SignJWT({ ...claims })
    .setProtectedHeader({
      alg: LEASE_ALGORITHM,
      kid: await thumbprintOf(relayKey),
      typ: LEASE_TYP,
      [GRANT_HEADER]: grantToken,
    })
    .sign(key);
}
