import { sha256 } from '../shared/secrets.js';
import type { Batch } from './order-model.js';

/** An object shape (its keys in insertion order) with its keys sorted and written as JSON labels. */
interface Shape {
  keys: readonly string[];
  labels: ReadonlyArray<readonly [string, string]>;
}

/**
 * Shapes seen, by key count and first key: a batch repeats the same few shapes thousands of
 * times, so each is sorted once, and a shape is recognised by comparing its keys (no text built
 * per object). Bounded, as a body's shapes are the sender's choice.
 */
const shapes = new Map<string, Shape[]>();
const MAX_SHAPES = 1_000;
let shapeCount = 0;

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i += 1) if (a[i] !== b[i]) return false;
  return true;
}

function labelsOf(keys: string[]): ReadonlyArray<readonly [string, string]> {
  const bucket = `${keys.length}:${keys[0] ?? ''}`;
  const known = shapes.get(bucket);
  const found = known?.find((shape) => sameKeys(shape.keys, keys));
  if (found !== undefined) return found.labels;
  const shape = { keys, labels: [...keys].sort().map((key) => [key, `${JSON.stringify(key)}:`] as const) };
  if (shapeCount < MAX_SHAPES) {
    shapeCount += 1;
    if (known === undefined) shapes.set(bucket, [shape]);
    else known.push(shape);
  }
  return shape.labels;
}

/**
 * JSON with object keys sorted at every depth: equal values give equal text. It runs over every
 * field of a batch of up to 1,000 products, so it writes primitives itself and sorts each object
 * shape once; the text is exactly that of sorting each object's entries and JSON.stringify.
 */
export function canonicalJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let text = '[';
        for (let i = 0; i < value.length; i += 1) {
          if (i > 0) text += ',';
          // An undefined element writes nothing, as the first definition did.
          text += canonicalJson(value[i]) ?? '';
        }
        return `${text}]`;
      }
      const record = value as Record<string, unknown>;
      let text = '{';
      let first = true;
      for (const [key, label] of labelsOf(Object.keys(record))) {
        const child = record[key];
        if (child === undefined) continue;
        if (!first) text += ',';
        first = false;
        text += label + canonicalJson(child);
      }
      return `${text}}`;
    }
    default:
      return JSON.stringify(value);
  }
}

/**
 * The idempotency fingerprint of a batch. It covers the normalized request, so `"sequence":"3"`
 * and `"sequence":3`, or a field sent as null and the same field left out, are the same body.
 */
export function batchHash(batch: Batch): string {
  return sha256(canonicalJson(batch));
}
