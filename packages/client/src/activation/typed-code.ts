/**
 * The typed form of activation messages (docs/activation.md): bytes as Crockford base32, cut in
 * groups of five characters, each followed by a check character, groups joined by `-`:
 * `7ZK2Q4-9XP0MC-…`. A person types it from one screen into another, so it forgives case, O for
 * 0, I and L for 1, spaces and missing dashes, and a mistyped character is named by its group.
 */

export const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const GROUP = 5;

/** Why a typed code could not be read; `group` counts from 1, as a person reads. */
export class TypedCodeError extends Error {
  constructor(
    message: string,
    readonly group: number | null = null,
  ) {
    super(message);
    this.name = 'TypedCodeError';
  }
}

function valueOf(char: string): number | undefined {
  const c = char.toUpperCase();
  const normal = c === 'O' ? '0' : c === 'I' || c === 'L' ? '1' : c;
  const value = CROCKFORD.indexOf(normal);
  return value < 0 ? undefined : value;
}

/**
 * Luhn mod 32 over the group's number and its characters: any one character typed wrong, and most
 * neighbours swapped, change it; the group's number makes two whole groups swapped change it too.
 */
export function checkCharacter(groupIndex: number, values: readonly number[]): number {
  const all = [groupIndex % 32, ...values];
  let sum = 0;
  let double = true;
  for (let i = all.length - 1; i >= 0; i -= 1) {
    let v = all[i] as number;
    if (double) {
      v *= 2;
      v = Math.floor(v / 32) + (v % 32);
    }
    sum += v;
    double = !double;
  }
  return (32 - (sum % 32)) % 32;
}

function toFiveBits(bytes: Uint8Array): number[] {
  const out: number[] = [];
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out.push((buffer >> (bits - 5)) & 31);
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  if (bits > 0) out.push((buffer << (5 - bits)) & 31);
  return out;
}

function fromFiveBits(values: readonly number[], byteLength: number): Uint8Array {
  const out = new Uint8Array(byteLength);
  let buffer = 0;
  let bits = 0;
  let at = 0;
  for (const value of values) {
    buffer = (buffer << 5) | value;
    bits += 5;
    if (bits >= 8) {
      if (at < byteLength) out[at] = (buffer >> (bits - 8)) & 255;
      at += 1;
      bits -= 8;
    }
    buffer &= (1 << bits) - 1;
  }
  return out;
}

/** The typed form of `bytes`. */
export function encodeTyped(bytes: Uint8Array): string {
  const values = toFiveBits(bytes);
  const groups: string[] = [];
  for (let g = 0; g * GROUP < values.length; g += 1) {
    const group = values.slice(g * GROUP, (g + 1) * GROUP);
    groups.push(group.map((v) => CROCKFORD[v]).join('') + CROCKFORD[checkCharacter(g, group)]);
  }
  return groups.join('-');
}

/**
 * The bytes of a typed code. Every group but the last has five characters and a check character;
 * the last may be shorter. Throws TypedCodeError naming the first group that does not check.
 */
export function decodeTyped(text: string): Uint8Array {
  const compact = text.replace(/[\s-]/g, '');
  if (compact === '') throw new TypedCodeError('the code is empty');
  const values: number[] = [];
  for (let i = 0; i < compact.length; i += 1) {
    const value = valueOf(compact.charAt(i));
    if (value === undefined) {
      throw new TypedCodeError(
        `character ${JSON.stringify(compact.charAt(i))} in group ${Math.floor(i / (GROUP + 1)) + 1} is not one of the code's`,
        Math.floor(i / (GROUP + 1)) + 1,
      );
    }
    values.push(value);
  }
  const data: number[] = [];
  for (let g = 0, at = 0; at < values.length; g += 1, at += GROUP + 1) {
    const group = values.slice(at, at + GROUP + 1);
    if (group.length < 2) throw new TypedCodeError(`group ${g + 1} is cut short`, g + 1);
    const payload = group.slice(0, -1);
    if (payload.length < GROUP && at + group.length < values.length) {
      throw new TypedCodeError(`group ${g + 1} is cut short`, g + 1);
    }
    if (checkCharacter(g, payload) !== group.at(-1)) {
      throw new TypedCodeError(`group ${g + 1} does not check: a character in it is mistyped`, g + 1);
    }
    data.push(...payload);
  }
  return fromFiveBits(data, Math.floor((data.length * 5) / 8));
}
