import { randomBytes } from 'node:crypto';
import { Secret, TOTP } from 'otpauth';

/** RFC 6238 as every authenticator app reads it: SHA-1, six digits, thirty seconds. */
const PERIOD_SECONDS = 30;
/** A code of the step before or after now is taken too: clocks drift, people type slowly. */
const WINDOW_STEPS = 1;

const totpOf = (secret: string, label = 'operator') =>
  new TOTP({
    issuer: 'Keyward',
    label,
    algorithm: 'SHA1',
    digits: 6,
    period: PERIOD_SECONDS,
    secret: Secret.fromBase32(secret),
  });

/** A new secret, 160 bits as RFC 4226 recommends, in base32 for the authenticator. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

/** The otpauth:// URI an authenticator app scans from the QR code. */
export function totpUri(secret: string, email: string): string {
  return totpOf(secret, email).toString();
}

/** The code of `atMs`, for tests and the CLI's own checks. */
export function totpCode(secret: string, atMs: number): string {
  return totpOf(secret).generate({ timestamp: atMs });
}

/** The time step a code was made for, or null when it is no code of the window around `atMs`. */
export function totpStepOf(secret: string, code: string, atMs: number): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = totpOf(secret).validate({ token: code, timestamp: atMs, window: WINDOW_STEPS });
  return delta === null ? null : Math.floor(atMs / 1000 / PERIOD_SECONDS) + delta;
}

// Crockford's base32 alphabet: no I, L, O or U, so a code read off paper is typed right.
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Ten recovery codes of 50 bits each, in two groups of five: `7K3QD-M9X2P`. */
export function newRecoveryCodes(count = 10): string[] {
  return Array.from({ length: count }, () => {
    const chars = [...randomBytes(10)].map((b) => ALPHABET[b % 32]).join('');
    return `${chars.slice(0, 5)}-${chars.slice(5)}`;
  });
}

/** A recovery code as typed (any case, spaces or dashes anywhere) in the form it was hashed in. */
export function normalRecoveryCode(typed: string): string {
  return typed.toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
}
