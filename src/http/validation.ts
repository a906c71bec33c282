import type { Ajv, ErrorObject } from 'ajv';
import type { FastifyRequest } from 'fastify';
import { surfaceOfRequest } from './surface.js';

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

/**
 * `orderList/2/assets/0/products` → `orderList[2].assets[0].products`. A path through a field
 * with no name (`?=x`) cannot be spelled so: '' for it, and the message names the part instead.
 */
export function fieldPath(instancePath: string, extra?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (parts.includes('')) return '';
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
 * Characters no text of a request may hold: C0 (U+0000–U+001F, among them ESC, CR, LF and TAB), DEL
 * and C1 (U+0080–U+009F). Text reaches operators (the CLI, logs, audit rows), where they forge
 * lines or drive the terminal; U+0000 the database cannot store at all.
 */
// eslint-disable-next-line no-control-regex -- finding them is the point
export const CONTROL_CHARACTER = /[\u0000-\u001f\u007f-\u009f]/;
/** The login only compares what it is given: there only what the database refuses is refused. */
// eslint-disable-next-line no-control-regex -- finding them is the point
export const NUL_CHARACTER = /\u0000/;
/** What a field declared multi-line may hold beside text: tabs and line breaks, nothing else. */
// eslint-disable-next-line no-control-regex -- finding them is the point
export const CONTROL_BUT_LINES = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;

export interface CharacterFound {
  /** JSON pointer of the string holding it. */
  pointer: string;
  /** `U+001B`. */
  character: string;
}

/** A node of the walk below, with the key and parent that spell its JSON pointer. */
interface WalkStep {
  node: unknown;
  key: string;
  parent: WalkStep | undefined;
}

/**
 * The first string in `value` holding a character of `refused`, or undefined. Walks with its own
 * stack: a body may nest deeper than the call stack goes.
 */
export function refusedCharacterAt(value: unknown, refused: RegExp): CharacterFound | undefined {
  // Each pending node keeps its key and its parent's step; the JSON pointer is spelled out only
  // for the string found, not for every field of a 1,000-product batch.
  const pending: WalkStep[] = [{ node: value, key: '', parent: undefined }];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { node } = next;
    if (typeof node === 'string') {
      const found = refused.exec(node);
      if (found !== null) {
        const code = (found[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0');
        return { pointer: pointerOf(next), character: `U+${code}` };
      }
    } else if (node !== null && typeof node === 'object') {
      const keys = Object.keys(node);
      for (let i = keys.length - 1; i >= 0; i -= 1) {
        const key = keys[i] as string;
        pending.push({ node: (node as Record<string, unknown>)[key], key, parent: next });
      }
    }
  }
  return undefined;
}

function pointerOf(step: WalkStep): string {
  const keys: string[] = [];
  for (let at: WalkStep | undefined = step; at?.parent !== undefined; at = at.parent) {
    keys.push(at.key.replace(/~/g, '~0').replace(/\//g, '~1'));
  }
  return keys
    .reverse()
    .map((k) => `/${k}`)
    .join('');
}

/**
 * preHandler of every route, after the schemas have passed: a control character anywhere in the
 * path, query or body is refused as a validation failure naming the field, before anything is
 * written. No field of either interface needs one: each is a single line, and JSON carried in a
 * String (a feature or extension value) needs none in its compact form.
 */
export async function refuseControlCharacters(request: FastifyRequest): Promise<void> {
  const refused = surfaceOfRequest(request) === 'oauth' ? NUL_CHARACTER : CONTROL_CHARACTER;
  // A route may declare body fields that hold several lines (a pasted activation request file):
  // they may break lines, never carry another control character.
  const multiline = request.routeOptions.config.multilineFields ?? [];
  const body = request.body as Record<string, unknown> | null | undefined;
  const lines = multiline.length === 0 || body === null || typeof body !== 'object' ? undefined : body;
  if (lines !== undefined) {
    const found = refusedCharacterAt(
      Object.fromEntries(multiline.map((name) => [name, lines[name]])),
      CONTROL_BUT_LINES,
    );
    if (found !== undefined) throw controlCharacterError(found, 'body');
  }
  const parts = [
    ['params', request.params],
    ['querystring', request.query],
    [
      'body',
      lines === undefined
        ? request.body
        : Object.fromEntries(Object.entries(lines).filter(([name]) => !multiline.includes(name))),
    ],
  ] as const;
  for (const [part, value] of parts) {
    const found = refusedCharacterAt(value, refused);
    if (found === undefined) continue;
    throw controlCharacterError(found, part);
  }
}

function controlCharacterError(found: CharacterFound, part: 'params' | 'querystring' | 'body'): Error {
  const validation: ErrorObject[] = [
    {
      keyword: 'x-text',
      instancePath: found.pointer,
      schemaPath: '',
      params: {},
      message: `must not contain the character ${found.character}`,
    },
  ];
  return Object.assign(new Error(formatValidationError(validation, part)), {
    statusCode: 400,
    validation,
    validationContext: part,
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Body fields that may hold line breaks and tabs (validation.ts, refuseControlCharacters). */
    multilineFields?: readonly string[];
  }
}
