import {
  createCipheriv,
  createDecipheriv,
  createHmac,
  randomBytes,
  scrypt,
  timingSafeEqual,
} from 'node:crypto';
import type { CipherGCM, DecipherGCM } from 'node:crypto';
import { base64At, BackupFileError, objectAt, oneOfAt, wholeAt } from './fields.js';

/**
 * A backup's encryption: a key derived from the passphrase with scrypt, the body sealed with
 * AES-256-GCM. Node's own crypto rather than a library: both are standard, maintained with Node
 * and OpenSSL, and stream; no small library adds anything but a dependency to keep current.
 */
export interface Sealing {
  cipher: 'aes-256-gcm';
  kdf: 'scrypt';
  /** scrypt's cost (N), block size (r) and parallelism (p). */
  N: number;
  r: number;
  p: number;
  salt: string;
  iv: string;
  /** An HMAC of a fixed text under the key: tells a wrong passphrase apart from a damaged file. */
  check: string;
}

/** 2^17: some 128 MB and a fraction of a second per try, as OWASP suggests for scrypt. */
const COST = { N: 2 ** 17, r: 8, p: 1 };
const MAX_MEMORY = 256 * 1024 * 1024;
const CHECK_TEXT = 'keyward-backup-passphrase-check';

export class WrongPassphraseError extends Error {}

function deriveKey(
  passphrase: string,
  salt: Buffer,
  cost: { N: number; r: number; p: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(passphrase, salt, 32, { ...cost, maxmem: MAX_MEMORY }, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

const checkOf = (key: Buffer) => createHmac('sha256', key).update(CHECK_TEXT).digest();

/** A new key and the header fields that let the same passphrase find it again. */
export async function newSealing(passphrase: string): Promise<{ sealing: Sealing; key: Buffer }> {
  const salt = randomBytes(16);
  const key = await deriveKey(passphrase, salt, COST);
  return {
    key,
    sealing: {
      cipher: 'aes-256-gcm',
      kdf: 'scrypt',
      ...COST,
      salt: salt.toString('base64'),
      iv: randomBytes(12).toString('base64'),
      check: checkOf(key).toString('base64'),
    },
  };
}

/**
 * The most work a backup may ask of scrypt: what this Keyward writes, so a header cannot make
 * opening a file take minutes (scrypt's time grows with N·r·p, its memory with N·r). A Keyward that
 * writes a higher cost raises this with it; its backups are refused here as a newer Keyward's anyway.
 */
const MAX_WORK = COST.N * COST.r * COST.p;

/** A header's `encryption`, checked field by field before any key is derived from it. */
export function sealingAt(value: unknown, where: string): Sealing {
  const s = objectAt(value, where);
  const cipher = oneOfAt(s.cipher, `${where}.cipher`, ['aes-256-gcm'] as const);
  const kdf = oneOfAt(s.kdf, `${where}.kdf`, ['scrypt'] as const);
  const N = wholeAt(s.N, `${where}.N`, 2 ** 20, 2);
  const r = wholeAt(s.r, `${where}.r`, 64, 1);
  const p = wholeAt(s.p, `${where}.p`, 16, 1);
  // scrypt wants N a power of two; a cost beyond the bounds is refused before it is paid.
  if ((N & (N - 1)) !== 0 || N * r * p > MAX_WORK || 128 * N * r > MAX_MEMORY) {
    throw new BackupFileError(`${where}: scrypt cost N=${N}, r=${r}, p=${p} is beyond what Keyward writes`);
  }
  return {
    cipher,
    kdf,
    N,
    r,
    p,
    salt: base64At(s.salt, `${where}.salt`, 16),
    iv: base64At(s.iv, `${where}.iv`, 12),
    check: base64At(s.check, `${where}.check`, 32),
  };
}

/** The key for a sealed backup (its sealing checked by sealingAt); a wrong passphrase is refused as such. */
export async function openSealing(sealing: Sealing, passphrase: string): Promise<Buffer> {
  const key = await deriveKey(passphrase, Buffer.from(sealing.salt, 'base64'), sealing);
  const expected = Buffer.from(sealing.check, 'base64');
  const actual = checkOf(key);
  if (expected.length !== actual.length || !timingSafeEqual(expected, actual)) {
    throw new WrongPassphraseError('wrong passphrase: it does not open this backup');
  }
  return key;
}

/** The body's cipher; `header` (the file's first lines) is bound in, so it cannot be swapped. */
export function sealer(key: Buffer, sealing: Sealing, header: Buffer): CipherGCM {
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.from(sealing.iv, 'base64'));
  cipher.setAAD(header);
  return cipher;
}

export function unsealer(key: Buffer, sealing: Sealing, header: Buffer, tag: Buffer): DecipherGCM {
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealing.iv, 'base64'));
  decipher.setAAD(header);
  decipher.setAuthTag(tag);
  return decipher;
}
