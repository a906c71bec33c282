/**
 * The readers a backup's JSON lines (header, manifest, trailer) are checked with. A backup file may
 * come from anyone, so every field is checked for its type and its bounds before any of it is used:
 * a length that is not a whole number, or is larger than the file, would otherwise steer the reader
 * (a fraction of a byte once made it loop forever). Each refusal names the field's path.
 */
export class BackupFileError extends Error {}

/** A value as a refusal shows it: short, whatever it holds. */
function shown(value: unknown): string {
  const text = value === undefined ? 'missing' : (JSON.stringify(value) ?? String(value));
  return text.length > 40 ? `${text.slice(0, 40)}…` : text;
}

const refuse = (where: string, value: unknown, wanted: string): BackupFileError =>
  new BackupFileError(`${where}: ${shown(value)} is not ${wanted}`);

/** A JSON object's fields; fields it does not name are left unread (a newer writer may add some). */
export function objectAt(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse(where, value, 'an object');
  }
  return value as Record<string, unknown>;
}

/** A whole number from 0 to `max`: lengths, counts and costs. */
export function wholeAt(value: unknown, where: string, max: number, min = 0): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min || value > max) {
    throw refuse(where, value, `a whole number from ${min} to ${max}`);
  }
  return value;
}

/** A string of at most `max` characters, matching `pattern` when one is given. */
export function textAt(value: unknown, where: string, max: number, pattern?: RegExp): string {
  if (typeof value !== 'string' || value.length > max || (pattern !== undefined && !pattern.test(value))) {
    throw refuse(where, value, pattern === undefined ? `a text of at most ${max} characters` : 'well-formed');
  }
  return value;
}

/** One of a closed set of strings. */
export function oneOfAt<T extends string>(value: unknown, where: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw refuse(where, value, `one of ${allowed.join(', ')}`);
  }
  return value as T;
}

/** A list of at most `max` items, each read by `item` with its index in the path. */
export function listAt<T>(
  value: unknown,
  where: string,
  max: number,
  item: (value: unknown, where: string) => T,
): T[] {
  if (!Array.isArray(value) || value.length > max) throw refuse(where, value, `a list of at most ${max}`);
  return value.map((v, i) => item(v, `${where}[${i}]`));
}

export const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Base64 of exactly `bytes` bytes (a salt, an IV, a tag): its decoded form, checked. */
export function base64At(value: unknown, where: string, bytes: number): string {
  const text = textAt(value, where, 4 * Math.ceil(bytes / 3), /^[A-Za-z0-9+/]+={0,2}$/);
  if (Buffer.from(text, 'base64').length !== bytes) throw refuse(where, value, `base64 of ${bytes} bytes`);
  return text;
}

/** A JSON line, parsed; what cannot be parsed is named as the section it should have been. */
export function jsonAt(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BackupFileError(`${where}: not readable JSON`);
  }
}
