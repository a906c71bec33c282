import { createPrivateKey, type KeyObject } from 'node:crypto';

// jose is imported where it is used, not here: config.ts imports this module, so every `keyward`
// command would otherwise load jose's ~50 modules at start (through tsx's loader, ~0.1 s of CPU
// per CLI process) for a key it only parses with node:crypto.

/** The public half of an Ed25519 key, as a JWK (RFC 8037) holds it. */
export interface Ed25519PublicJwk {
  kty: 'OKP';
  crv: 'Ed25519';
  x: string;
}

/** The whole key: `d` is the secret. */
export interface Ed25519PrivateJwk extends Ed25519PublicJwk {
  d: string;
}

/** The algorithm of every lease signature (RFC 8037's name for Ed25519 in JWS). */
export const LEASE_ALGORITHM = 'EdDSA';

const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function isEd25519PrivateJwk(value: unknown): value is Ed25519PrivateJwk {
  if (value === null || typeof value !== 'object') return false;
  const jwk = value as Record<string, unknown>;
  return (
    jwk.kty === 'OKP' &&
    jwk.crv === 'Ed25519' &&
    typeof jwk.x === 'string' &&
    BASE64URL.test(jwk.x) &&
    typeof jwk.d === 'string' &&
    BASE64URL.test(jwk.d)
  );
}

export function publicHalf(jwk: Ed25519PublicJwk): Ed25519PublicJwk {
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x };
}

/** The key's id: its RFC 7638 thumbprint, the same wherever and whenever it is computed. */
export async function thumbprintOf(jwk: Ed25519PublicJwk): Promise<string> {
  const { calculateJwkThumbprint } = await import('jose');
  return calculateJwkThumbprint(publicHalf(jwk), 'sha256');
}

export async function generateEd25519(): Promise<Ed25519PrivateJwk> {
  const { exportJWK, generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair(LEASE_ALGORITHM, { crv: 'Ed25519', extractable: true });
  const jwk = await exportJWK(privateKey);
  if (!isEd25519PrivateJwk(jwk)) throw new Error('the generated key is not an Ed25519 key');
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d };
}

function keyObjectOf(given: string): { key: KeyObject; claimedX?: string } | undefined {
  if (!given.startsWith('{')) {
    return { key: createPrivateKey({ key: given.replace(/\\n/g, '\n'), format: 'pem' }) };
  }
  const parsed: unknown = JSON.parse(given);
  if (!isEd25519PrivateJwk(parsed)) return undefined;
  const { kty, crv, x, d } = parsed;
  return { key: createPrivateKey({ key: { kty, crv, x, d }, format: 'jwk' }), claimedX: x };
}

/**
 * An Ed25519 private key given as a PKCS#8 PEM or as a private JWK's JSON; undefined when it is
 * neither. A PEM written on one line with `\n` escapes, as environment files often hold it, is
 * read too. Synchronous, so the configuration is read and checked once at start. Never says what
 * it was given.
 */
export function parseEd25519PrivateKey(raw: string): Ed25519PrivateJwk | undefined {
  let given: { key: KeyObject; claimedX?: string } | undefined;
  try {
    given = keyObjectOf(raw.trim());
  } catch {
    return undefined;
  }
  if (given === undefined || given.key.asymmetricKeyType !== 'ed25519') return undefined;
  const jwk = given.key.export({ format: 'jwk' });
  if (!isEd25519PrivateJwk(jwk)) return undefined;
  // Node derives `x` from `d`: a JWK whose public half is another key's is no key at all.
  if (given.claimedX !== undefined && given.claimedX !== jwk.x) return undefined;
  return { kty: jwk.kty, crv: jwk.crv, x: jwk.x, d: jwk.d };
}
