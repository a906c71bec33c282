import fc from 'fast-check';
import type { DeclaredRoute } from '../../../src/http/access/enforce.js';
import { hostileSegment, rawBodies, withBody, type BodyPlan, type FuzzRequest } from './fuzz-request.js';
import { hostileValue, mutated, validValue, type Hints, type JsonSchema } from './schema-arbitrary.js';

// Generated calls of one admin route, drawn from the schema the route declares where it is
// registered (the admin API is kept out of the OpenAPI document): its body valid and broken, its
// query well-formed, hostile or given twice, its path parameters real ids or hostile segments.

export interface AdminFuzzSetup {
  headers: Record<string, string>;
  pathValues: Record<string, fc.Arbitrary<string>>;
  hints: Hints;
  bodyLimitBytes: number;
}

/** Admin schemas are inline TypeBox, with no `$ref` to resolve. */
const NO_SCHEMAS = {
  resolve: (ref: string): JsonSchema => {
    throw new Error(`an admin schema refers to ${ref}`);
  },
  hints: {},
};

function part(route: DeclaredRoute, name: 'body' | 'querystring'): JsonSchema | undefined {
  const schemas = route.schema as Record<string, unknown> | undefined;
  const schema = schemas?.[name];
  return schema !== null && typeof schema === 'object' ? (schema as JsonSchema) : undefined;
}

const propertiesOf = (schema: JsonSchema | undefined): Record<string, JsonSchema> =>
  (schema?.properties as Record<string, JsonSchema> | undefined) ?? {};

export const pathParamsOf = (route: DeclaredRoute): string[] =>
  [...route.url.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1] as string);

/** The names a route's schema gives its body, query and path: what a validation error may name. */
export function fieldNamesOf(route: DeclaredRoute): Set<string> {
  return new Set([
    ...Object.keys(propertiesOf(part(route, 'body'))),
    ...Object.keys(propertiesOf(part(route, 'querystring'))),
    ...pathParamsOf(route),
  ]);
}

/** Segments that climb, end early or hide a NUL, as well as fuzz-request's hostile ones. */
const climbing = fc.constantFrom(
  '..',
  '.',
  '%2e%2e',
  '.%2E',
  '..%2F..%2Fstatus',
  '..%2Fapps',
  '%00',
  'a%00b',
);

function pathValue(setup: AdminFuzzSetup, name: string): fc.Arbitrary<string> {
  const known = (setup.pathValues[name] ?? fc.uuid()).map((v) =>
    v.includes('%') ? v : encodeURIComponent(v),
  );
  return fc.oneof(
    { arbitrary: known, weight: 6 },
    { arbitrary: hostileSegment, weight: 2 },
    { arbitrary: climbing, weight: 1 },
  );
}

const text = (v: unknown): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

/** A query value: absent, well-formed, hostile, or given twice. */
function queryValues(schema: JsonSchema, hint: fc.Arbitrary<unknown> | undefined) {
  const good = (hint ?? validValue(schema, NO_SCHEMAS)).map(text);
  return fc.oneof(
    { arbitrary: fc.constant<string[]>([]), weight: 2 },
    { arbitrary: good.map((v) => [v]), weight: 4 },
    { arbitrary: hostileValue.map((v) => [text(v)]), weight: 3 },
    { arbitrary: fc.tuple(good, good), weight: 1 },
  );
}

/** Names no admin route declares, some of them poisonous to a careless parser. */
const strayQuery = fc.oneof(
  { arbitrary: fc.constant<Array<[string, string]>>([]), weight: 4 },
  {
    arbitrary: fc.array(
      fc.tuple(
        fc.constantFrom('__proto__', 'constructor', 'x[y]', 'limit[]', '', 'a\u0000b', '%zz'),
        hostileValue.map(text),
      ),
      { minLength: 1, maxLength: 3 },
    ),
    weight: 1,
  },
);

function bodyPlans(route: DeclaredRoute, setup: AdminFuzzSetup): fc.Arbitrary<BodyPlan | undefined> {
  const schema = part(route, 'body');
  const raw = rawBodies(setup.bodyLimitBytes);
  if (schema === undefined) {
    // Routes without a body: mostly none, sometimes one they must ignore or refuse cleanly.
    return fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 6 },
      { arbitrary: raw, weight: 1 },
      { arbitrary: hostileValue.map((value): BodyPlan => ({ kind: 'json', value })), weight: 1 },
    );
  }
  const valid = validValue(schema, { ...NO_SCHEMAS, hints: setup.hints });
  return fc.oneof(
    { arbitrary: valid.map((value): BodyPlan => ({ kind: 'json', value })), weight: 3 },
    { arbitrary: mutated(valid).map((value): BodyPlan => ({ kind: 'json', value })), weight: 6 },
    { arbitrary: raw, weight: 1 },
    { arbitrary: fc.constant(undefined), weight: 1 },
  );
}

/** Well-formed, malformed, oversized, wrongly typed and deeply nested calls of one admin route. */
export function adminRequests(route: DeclaredRoute, setup: AdminFuzzSetup): fc.Arbitrary<FuzzRequest> {
  const path = fc.record(
    Object.fromEntries(pathParamsOf(route).map((name) => [name, pathValue(setup, name)])),
  );
  const declared = propertiesOf(part(route, 'querystring'));
  const query = fc.record(
    Object.fromEntries(
      Object.entries(declared).map(([name, schema]) => [name, queryValues(schema, setup.hints[name])]),
    ),
  );
  return fc
    .record({ path, query, stray: strayQuery, body: bodyPlans(route, setup), dropType: fc.boolean() })
    .map(({ path: values, query: q, stray, body, dropType }) => {
      const url = route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => values[name] ?? 'x');
      const search = new URLSearchParams();
      for (const [name, list] of Object.entries(q)) for (const value of list) search.append(name, value);
      for (const [name, value] of stray) search.append(name, value);
      const searchText = search.toString();
      return {
        method: route.method as FuzzRequest['method'],
        url: searchText === '' ? url : `${url}?${searchText}`,
        ...withBody(setup.headers, body, dropType),
      };
    });
}
