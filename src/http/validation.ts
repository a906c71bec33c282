import type { Ajv, ErrorObject } from 'ajv';

const DIGITS = /^-?[0-9]{1,16}$/;

interface IntBounds {
  minimum?: number;
  maximum?: number;
}

/**
 * `x-int`: integer fields accept a JSON integer or a string of digits (real clients send
 * `"sequence":"0"`); the string is replaced by its number, so handlers always see numbers.
 * Anything else fails with "must be an integer".
 */
export function intLikeKeyword(ajv: Ajv): Ajv {
  return ajv.addKeyword({
    keyword: 'x-int',
    modifying: true,
    errors: true,
    schemaType: 'object',
    validate: function validateIntLike(
      bounds: IntBounds,
      data: unknown,
      _schema: unknown,
      ctx?: { parentData: Record<string | number, unknown>; parentDataProperty: string | number },
    ): boolean {
      const self = validateIntLike as unknown as { errors: Partial<ErrorObject>[] | null };
      let value: number;
      if (typeof data === 'number' && Number.isSafeInteger(data)) value = data;
      else if (typeof data === 'string' && DIGITS.test(data)) value = Number(data);
      else {
        self.errors = [{ keyword: 'x-int', message: 'must be an integer', params: {} }];
        return false;
      }
      if (bounds.minimum !== undefined && value < bounds.minimum) {
        self.errors = [{ keyword: 'x-int', message: `must be >= ${bounds.minimum}`, params: {} }];
        return false;
      }
      if (bounds.maximum !== undefined && value > bounds.maximum) {
        self.errors = [{ keyword: 'x-int', message: `must be <= ${bounds.maximum}`, params: {} }];
        return false;
      }
      if (ctx && typeof data === 'string') ctx.parentData[ctx.parentDataProperty] = value;
      return true;
    },
  });
}

/** `orderList/2/assets/0/products` → `orderList[2].assets[0].products`. */
export function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').filter((p) => p !== '');
  if (extra !== undefined) parts.push(extra);
  let out = '';
  for (const part of parts) {
    const name = part.replace(/~1/g, '/').replace(/~0/g, '~');
    out += /^[0-9]+$/.test(name) ? `[${name}]` : out === '' ? name : `.${name}`;
  }
  return out;
}

function describe(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'enum':
      return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
    case 'additionalProperties':
      return 'is not allowed';
    default:
      return error.message ?? 'is invalid';
  }
}

/** One readable sentence naming the field: `orderList[2].sequence: must be an integer`. */
export function formatValidationError(errors: ErrorObject[], part: string): string {
  const first = errors[0];
  if (first === undefined) return `${part}: is invalid`;
  const missing =
    first.keyword === 'required'
      ? (first.params as { missingProperty: string }).missingProperty
      : first.keyword === 'additionalProperties'
        ? (first.params as { additionalProperty: string }).additionalProperty
        : undefined;
  const path = fieldPath(first.instancePath, missing);
  return `${path === '' ? part : path}: ${describe(first)}`;
}
