/** A UTF-16 half without its other half: text columns store it as U+FFFD, jsonb refuses it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A value as a jsonb column takes it. Text a caller chose (a CRM id, a customer name, a feature
 * code) may hold a lone surrogate, which JSON.stringify escapes as `\ud800` and jsonb refuses; it
 * becomes U+FFFD, as the same text does in a text column, so no write fails for it.
 */
export function jsonbText(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    typeof v === 'string' ? v.replace(LONE_SURROGATE, '\uFFFD') : v,
  );
}
