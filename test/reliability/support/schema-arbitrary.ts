import fc from 'fast-check';

/** A JSON Schema node as the OpenAPI document carries it. */
export type JsonSchema = Record<string, unknown>;

/** Values for a property by name, to steer generated bodies past the first check (a known channel). */
export type Hints = Record<string, fc.Arbitrary<unknown>>;

export interface SchemaContext {
  /** `#/components/schemas/X` → X's schema. */
  resolve(ref: string): JsonSchema;
  hints: Hints;
}

/** Past this depth a recursive schema takes its shortest form (null or an empty list). */
const MAX_DEPTH = 6;
/** Generated lists stay short: the limits themselves are probed by `mutated`. */
const MAX_ITEMS = 3;

const asSchemas = (value: unknown): JsonSchema[] => (Array.isArray(value) ? (value as JsonSchema[]) : []);
const num = (value: unknown): number | undefined => (typeof value === 'number' ? value : undefined);

function stringOf(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = num(schema.minLength) ?? 0;
  const maxLength = num(schema.maxLength) ?? 64;
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern);
    // A pattern's shortest strings are xsmall's; one with a floor of several characters (a
    // fingerprint's 8) needs longer ones, or nearly every string is filtered out and a list of
    // them is hardly ever made.
    return fc
      .stringMatching(pattern, { size: minLength > 4 ? 'medium' : 'xsmall' })
      .filter((s) => s.length >= minLength && s.length <= maxLength);
  }
  const short = fc.string({ minLength, maxLength: Math.min(maxLength, Math.max(minLength, 12)) });
  // The longest value the schema allows sits at its boundary, where off-by-one bugs live.
  const longest = fc.constant('x'.repeat(maxLength));
  return fc.oneof({ arbitrary: short, weight: 5 }, { arbitrary: longest, weight: 1 });
}

function integerOf(schema: JsonSchema): fc.Arbitrary<number> {
  const min = num(schema.minimum) ?? -2_147_483_648;
  const max = num(schema.maximum) ?? Number.MAX_SAFE_INTEGER;
  const bounds = [min, max, Math.min(max, Math.max(min, 0)), Math.min(max, Math.max(min, 1))];
  return fc.oneof(
    fc.integer({ min: Math.max(min, -1e6), max: Math.min(max, 1e6) }),
    fc.constantFrom(...bounds),
  );
}

/** Values the schema accepts: well-formed requests that reach the service's own checks. */
export function validValue(schema: JsonSchema, ctx: SchemaContext, depth = 0): fc.Arbitrary<unknown> {
  if (typeof schema.$ref === 'string') {
    return depth > MAX_DEPTH ? fc.constant(null) : validValue(ctx.resolve(schema.$ref), ctx, depth + 1);
  }
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const alternatives = asSchemas(schema.anyOf ?? schema.oneOf);
  if (alternatives.length > 0) {
    // Deep down, prefer the alternative that ends the recursion.
    const nullable = alternatives.find((a) => a.type === 'null');
    if (depth > MAX_DEPTH && nullable) return fc.constant(null);
    return fc.oneof(...alternatives.map((a) => validValue(a, ctx, depth)));
  }
  switch (schema.type) {
    case 'string':
      return stringOf(schema);
    case 'integer':
      return integerOf(schema);
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const items = (schema.items as JsonSchema | undefined) ?? {};
      const minLength = num(schema.minItems) ?? 0;
      const maxLength =
        depth > MAX_DEPTH
          ? minLength
          : Math.max(minLength, Math.min(num(schema.maxItems) ?? MAX_ITEMS, MAX_ITEMS));
      return fc.array(validValue(items, ctx, depth + 1), { minLength, maxLength });
    }
    case 'object': {
      const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
      const required = (schema.required as string[] | undefined) ?? [];
      const names = Object.keys(properties);
      if (names.length === 0) {
        return fc.dictionary(fc.string({ maxLength: 12 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 6 });
      }
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const name of names) {
        model[name] = ctx.hints[name] ?? validValue(properties[name] as JsonSchema, ctx, depth + 1);
      }
      return fc.record(model, { requiredKeys: required.filter((r) => r in model) });
    }
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/** Nested arrays or objects this deep: a stack-hungry parser, validator or walker shows itself. */
export function deeplyNested(depth: number, shape: 'array' | 'object' = 'array'): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = shape === 'array' ? [value] : { a: value };
  return value;
}

/** Values of every JSON type and edge: wrong types, boundaries, text PostgreSQL refuses, huge ones. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    -0.5,
    1e21,
    1e308,
    2 ** 53,
    -(2 ** 53),
    2 ** 31,
    -(2 ** 31) - 1,
    '',
    ' ',
    '\t\n',
    '\u0000',
    'a\u0000b',
    '\ud800',
    '\ufeff',
    '😀'.repeat(40),
    '9'.repeat(30),
    '-1',
    '1e3',
    '0x10',
    ' 12',
    '12 ',
    '+5',
    'NaN',
    'null',
    'true',
    "'; drop table members; --",
    '%00',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    {},
    [],
    [null],
    [[[]]],
    JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
  ),
  fc.constantFrom(1_000, 5_000, 70_000).map((n) => 'x'.repeat(n)),
  fc.constantFrom(64, 512, 4_000).map((n) => deeplyNested(n)),
  fc.constantFrom(64, 512, 4_000).map((n) => deeplyNested(n, 'object')),
  fc.jsonValue({ maxDepth: 3 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

type Path = Array<string | number>;

/** Every place in a JSON value, the root included. */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (Array.isArray(value)) value.forEach((v, i) => pathsOf(v, [...prefix, i], out));
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) pathsOf(v, [...prefix, k], out);
  }
  return out;
}

function getAt(value: unknown, path: Path): unknown {
  let node = value;
  for (const step of path) node = (node as Record<string | number, unknown>)[step];
  return node;
}

/** A copy of `value` with `path` replaced by `replace(old)`, or removed when it returns `REMOVE`. */
const REMOVE = Symbol('remove');
function setAt(value: unknown, path: Path, replace: (old: unknown) => unknown): unknown {
  if (path.length === 0) return replace(value);
  const [head, ...rest] = path as [string | number, ...Path];
  if (Array.isArray(value)) {
    const copy = [...value];
    const next = setAt(copy[head as number], rest, replace);
    if (next === REMOVE) copy.splice(head as number, 1);
    else copy[head as number] = next;
    return copy;
  }
  const copy = { ...(value as Record<string, unknown>) };
  const next = setAt(copy[head as string], rest, replace);
  if (next === REMOVE) delete copy[head as string];
  else
    Object.defineProperty(copy, head, { value: next, enumerable: true, writable: true, configurable: true });
  return copy;
}

type Mutation = (old: unknown) => unknown;

/** One way to break the value found at a place. */
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    arbitrary: hostileValue.map(
      (v): Mutation =>
        () =>
          v,
    ),
    weight: 6,
  },
  { arbitrary: fc.constant<Mutation>(() => REMOVE), weight: 2 },
  {
    // A field the schema does not name: ignored, never stored.
    arbitrary: fc.tuple(fc.string({ maxLength: 10 }), hostileValue).map(
      ([key, v]): Mutation =>
        (old) =>
          old !== null && typeof old === 'object' && !Array.isArray(old) ? { ...old, [`x${key}`]: v } : v,
    ),
    weight: 1,
  },
  {
    // Strings that pass the schema but not the database or the rules behind it.
    arbitrary: fc.constantFrom('\u0000', '\ud800', ' ', '😀', 'x'.repeat(300)).map(
      (tail): Mutation =>
        (old) =>
          typeof old === 'string' ? old + tail : tail,
    ),
    weight: 2,
  },
  {
    // Lists past their limits: 100 users, 200 orders, 1,000 elements.
    arbitrary: fc.constantFrom(101, 201, 1_001).map(
      (n): Mutation =>
        (old) =>
          Array.isArray(old) && old.length > 0
            ? Array.from({ length: n }, (_, i) => old[i % old.length])
            : Array.from({ length: n }, () => old),
    ),
    weight: 1,
  },
  {
    // Integers at and past every boundary, as numbers and as strings of digits.
    arbitrary: fc
      .constantFrom(-1, 0, 1, 2_147_483_647, 2_147_483_648, 2 ** 53, 1e16, 1e17)
      .chain((n) => fc.constantFrom<unknown>(n, String(n), -n, `${n}.0`, `${n}1`))
      .map(
        (v): Mutation =>
          () =>
            v,
      ),
    weight: 2,
  },
);

/** A well-formed value with one to three places broken. */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return valid.chain((value) => {
    const paths = pathsOf(value);
    const one = fc.tuple(fc.constantFrom(...paths), mutation);
    return fc.array(one, { minLength: 1, maxLength: 3 }).map((changes) => {
      let out = value;
      for (const [path, change] of changes) {
        // An earlier change may have removed the place; then this one is skipped.
        try {
          getAt(out, path.slice(0, -1));
          out = setAt(out, path, change);
        } catch {
          // unreachable place
        }
      }
      return out === REMOVE ? undefined : out;
    });
  });
}
