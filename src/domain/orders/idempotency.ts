import { sha256 } from '../shared/secrets.js';
import type { Batch } from './order-model.js';

/** JSON with object keys sorted at every depth: equal values give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The idempotency fingerprint of a batch. It covers the normalized request, so `"sequence":"3"`
 * and `"sequence":3`, or a field sent as null and the same field left out, are the same body.
 */
export function batchHash(batch: Batch): string {
  return sha256(canonicalJson(batch));
}
