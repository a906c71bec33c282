import type { Ajv, ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';

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

/**
 * The JSON pointer of the first string holding U+0000 (text PostgreSQL cannot store), or
 * undefined. Walks with its own stack: a body may nest deeper than the call stack goes.
 */
export function nulCharacterAt(value: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[value, '']];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, pointer] = next;
    if (typeof node === 'string') {
      if (node.includes('\u0000')) return pointer;
    } else if (node !== null && typeof node === 'object') {
      const entries = Object.entries(node).reverse();
      for (const [key, child] of entries) {
        pending.push([child, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`]);
      }
    }
  }
  return undefined;
}

/**
 * preHandler of every route, after the schemas have passed: U+0000 anywhere in the path, query or
 * body is refused as a validation failure naming the field, before anything is written.
 */
export async function refuseNulCharacters(request: FastifyRequest): Promise<void> {
  const parts = [
    ['params', request.params],
    ['querystring', request.query],
    ['body', request.body],
  ] as const;
  for (const [part, value] of parts) {
    const instancePath = nulCharacterAt(value);
    if (instancePath === undefined) continue;
    const validation: ErrorObject[] = [
      {
        keyword: 'x-text',
        instancePath,
        schemaPath: '',
        params: {},
        message: 'must not contain the character U+0000',
      },
    ];
    throw Object.assign(new Error(formatValidationError(validation, part)), {
      statusCode: 400,
      validation,
      validationContext: part,
    });
  }
}
