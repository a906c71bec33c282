import { randomInt } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
export const ENTERPRISE_CODE_LENGTH = 6;

/**
 * A random 6-character code of lowercase letters and digits: the suffix of every member account
 * of the enterprise. 36^6 ≈ 2.2 billion codes, so a collision is rare and simply retried.
 */
export function newEnterpriseCode(): string {
  let code = '';
  for (let i = 0; i < ENTERPRISE_CODE_LENGTH; i += 1) code += ALPHABET[randomInt(ALPHABET.length)];
  return code;
}
