import fc from 'fast-check';
import { expect } from 'vitest';
import type { Harness } from '../../support/harness.js';
import { nonce } from '../../support/harness.js';
import type { ApiDocument, Operation } from './api-operations.js';
import { hostileValue, mutated, validValue, type Hints, type JsonSchema } from './schema-arbitrary.js';
import { changedTables, type TenantState } from './tenant-state.js';

export interface FuzzRequest {
  method: Operation['method'];
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

export interface FuzzSetup {
  doc: ApiDocument;
  /** The caller's own credentials: requests get past the guard unless the fuzz breaks the nonce. */
  headers: () => Record<string, string>;
  /** Values for path parameters by name: real ids of the caller's own data, mixed with junk. */
  pathValues: Record<string, fc.Arbitrary<string>>;
  /** Values for body and query fields by name, to reach past the first check. */
  hints: Hints;
  bodyLimitBytes: number;
}

/** Runs per operation and CI run; `KEYWARD_FUZZ_RUNS=5000` for a long search. */
export const FUZZ_RUNS = Number(process.env.KEYWARD_FUZZ_RUNS ?? '') || 200;
/**
 * A test's time grows with its runs. It must not time out: the runs of a test that timed out go on
 * in the background and would change the tenant under the next test's feet.
 */
export const FUZZ_TIMEOUT_MS = 60_000 + FUZZ_RUNS * 500;

/** Path segments a router or validator may choke on. */
export const hostileSegment = fc.oneof(
  fc.constantFrom('%00', '%2F', '%E0%A4%A', '%', '%ZZ', '%F0%9F%98%80', '%20', '%0A', 'null', '-1', "'--"),
  fc.constantFrom(65, 101, 129, 1_000, 5_000).map((n) => 'a'.repeat(n)),
  fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
);

/** A query value: absent, well-formed, hostile, or given twice. */
function queryValues(schema: JsonSchema, doc: ApiDocument, hint?: fc.Arbitrary<unknown>) {
  const ctx = { resolve: doc.resolve, hints: {} };
  const text = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));
  const good = (hint ?? validValue(schema, ctx)).map(text);
  return fc.oneof(
    { arbitrary: fc.constant<string[]>([]), weight: 2 },
    { arbitrary: good.map((v) => [v]), weight: 4 },
    { arbitrary: hostileValue.map((v) => [text(v)]), weight: 3 },
    { arbitrary: fc.tuple(good, good), weight: 1 },
  );
}

/** Spent by the first request that carries it: every later one is a replay. */
const SPENT = nonce();

const nonceValues: fc.Arbitrary<readonly string[] | 'fresh'> = fc.oneof(
  { arbitrary: fc.constant<'fresh'>('fresh'), weight: 20 },
  { arbitrary: fc.constant<string[]>([]), weight: 1 },
  {
    arbitrary: fc.constantFrom(['short'], ['has space in it'], ['x'.repeat(65)], ['é'.repeat(10)]),
    weight: 1,
  },
  { arbitrary: fc.constant([SPENT]), weight: 1 },
  { arbitrary: fc.constant(null).map(() => [nonce(), nonce()]), weight: 1 },
);

export type BodyPlan = { kind: 'json'; value: unknown } | { kind: 'raw'; text: string; contentType?: string };

export function rawBodies(limit: number): fc.Arbitrary<BodyPlan> {
  const raw = (text: string, contentType?: string): BodyPlan => ({
    kind: 'raw',
    text,
    ...(contentType === undefined ? {} : { contentType }),
  });
  return fc.oneof(
    fc.constantFrom(
      raw('{'),
      raw('{"a":'),
      raw('not json'),
      raw('[]'),
      raw('[1,2,3]'),
      raw('"text"'),
      raw('42'),
      raw('null'),
      raw('true'),
      raw(''),
      raw('\ufeff{}'),
      raw('{"a":1}{"b":2}'),
      raw('{"a":1,"a":2}'),
      raw('{}', 'text/plain'),
      raw('{}', 'application/xml'),
      raw('{}', 'application/json; charset=utf-16'),
      raw('{}', 'multipart/form-data; boundary=x'),
      raw('size=3&userList=x&channelCode=x', 'application/x-www-form-urlencoded'),
      raw('%%%&&&===', 'application/x-www-form-urlencoded'),
      raw(`{"a":"${'x'.repeat(limit)}"}`),
      raw(`${'['.repeat(100_000)}${']'.repeat(100_000)}`),
      raw(`${'{"a":'.repeat(20_000)}1${'}'.repeat(20_000)}`),
    ),
    fc.string({ unit: 'binary', maxLength: 200 }).map((text) => raw(text)),
  );
}

function bodyPlans(op: Operation, setup: FuzzSetup): fc.Arbitrary<BodyPlan | undefined> {
  if (!op.body) {
    // Operations without a body: mostly none, sometimes one they must ignore or refuse cleanly.
    return fc.oneof(
      { arbitrary: fc.constant(undefined), weight: 8 },
      { arbitrary: rawBodies(setup.bodyLimitBytes), weight: 1 },
    );
  }
  const ctx = { resolve: setup.doc.resolve, hints: setup.hints };
  const valid = validValue(op.body, ctx);
  return fc.oneof(
    { arbitrary: valid.map((value): BodyPlan => ({ kind: 'json', value })), weight: 2 },
    { arbitrary: mutated(valid).map((value): BodyPlan => ({ kind: 'json', value })), weight: 7 },
    { arbitrary: rawBodies(setup.bodyLimitBytes), weight: 1 },
  );
}

/** Deeper than the test's own stack can serialize: sent as the same depth of bare nesting. */
const TOO_DEEP = `${'{"a":['.repeat(20_000)}1${']}'.repeat(20_000)}`;

/**
 * Values mutated several times may nest lists past their limits inside one another (1,001 × 1,001
 * × 1,001 shared elements): written out they would take the test, not the server, for ever. Past
 * this many nodes such a value is sent as what it amounts to, a body far too large to accept.
 */
const MAX_NODES = 50_000;
const TOO_LARGE = `[${'0,'.repeat(1 << 20)}0]`;

/** Whether a value has more than `budget` nodes, counted until the budget runs out. */
function tooManyNodes(value: unknown, budget = { left: MAX_NODES }): boolean {
  budget.left -= 1;
  if (budget.left < 0) return true;
  if (value === null || typeof value !== 'object') return false;
  for (const child of Array.isArray(value) ? value : Object.values(value)) {
    if (tooManyNodes(child, budget)) return true;
  }
  return false;
}

function serialize(value: unknown): string {
  try {
    if (tooManyNodes(value)) return TOO_LARGE;
    return JSON.stringify(value);
  } catch (error) {
    if (error instanceof RangeError) return TOO_DEEP;
    throw error;
  }
}

/** Well-formed, malformed, oversized, wrongly typed and deeply nested calls of one operation. */
export function requests(op: Operation, setup: FuzzSetup): fc.Arbitrary<FuzzRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  const queryParams = op.parameters.filter((p) => p.in === 'query' && p.name !== 'g_nonce');
  const path = fc.record(
    Object.fromEntries(
      pathParams.map((p) => [
        p.name,
        fc
          .oneof(
            { arbitrary: (setup.pathValues[p.name] ?? fc.uuid()).map(encodeURIComponent), weight: 4 },
            { arbitrary: hostileSegment, weight: 1 },
          )
          // `.` and `..`, however spelled, are resolved away by URL parsers before any server sees them.
          .filter((segment) => !/^(\.|%2e){1,2}$/i.test(segment)),
      ]),
    ),
  );
  const query = fc.record(
    Object.fromEntries(
      queryParams.map((p) => [p.name, queryValues(p.schema, setup.doc, setup.hints[p.name])]),
    ),
  );
  return fc
    .record({ path, query, nonce: nonceValues, body: bodyPlans(op, setup), dropType: fc.boolean() })
    .map(({ path: values, query: q, nonce: n, body, dropType }) => {
      const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => values[name] ?? 'x');
      const search = new URLSearchParams();
      for (const value of n === 'fresh' ? [nonce()] : n) search.append('g_nonce', value);
      for (const [name, list] of Object.entries(q)) for (const value of list) search.append(name, value);
      return {
        method: op.method,
        url: `${url}?${search.toString()}`,
        ...withBody(setup.headers(), body, dropType),
      };
    });
}

/** The caller's headers with a body's Content-Type, and the body as sent. */
export function withBody(
  headers: Record<string, string>,
  body: BodyPlan | undefined,
  dropType: boolean,
): Pick<FuzzRequest, 'headers' | 'payload'> {
  if (body?.kind === 'json' && body.value !== undefined) {
    return { headers: { ...headers, 'content-type': 'application/json' }, payload: serialize(body.value) };
  }
  if (body?.kind !== 'raw') return { headers: { ...headers } };
  // Now and then no Content-Type at all, as curl -d sends none it knows of.
  const typed = body.contentType !== undefined || !dropType;
  return {
    headers: typed ? { ...headers, 'content-type': body.contentType ?? 'application/json' } : { ...headers },
    payload: body.text,
  };
}

export interface Answer {
  statusCode: number;
  code: number | string;
  body: Record<string, unknown>;
}

/**
 * Every answer is the envelope: 200 with code 0, or 299 with one of the operation's documented
 * codes (never "500"), a message and a cause, and never a stack trace.
 */
export async function send(h: Harness, op: Operation, request: FuzzRequest): Promise<Answer> {
  const response = await h.app.inject(request);
  const where = `${request.method} ${request.url.slice(0, 300)} ${request.payload?.slice(0, 300) ?? ''}`;
  expect(response.headers['x-request-id'], where).toBeTruthy();
  expect(response.body, where).not.toContain('    at ');
  let body: Record<string, unknown>;
  try {
    body = response.json() as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (${response.statusCode}): ${response.body.slice(0, 300)}\n${where}`);
  }
  const summary = `${response.statusCode} ${JSON.stringify(body).slice(0, 400)}\n${where}`;
  if (response.statusCode === 200) {
    expect(body, summary).toMatchObject({ code: 0, message: 'success' });
  } else {
    expect(response.statusCode, summary).toBe(299);
    expect(typeof body.code, summary).toBe('string');
    expect(body.code, summary).not.toBe('500');
    expect([...op.codes], summary).toContain(body.code);
    expect(typeof body.message === 'string' && body.message !== '', summary).toBe(true);
    expect(typeof body.cause, summary).toBe('string');
  }
  return { statusCode: response.statusCode, code: body.code as number | string, body };
}

/**
 * Member op 1's partial failure creates the users it accepted: a refusal that may write. So do the
 * codes a surface names in `writingRefusals` (the runtime ends a revoked or expired lease).
 */
function mayHaveWritten(answer: Answer, writingRefusals: readonly string[]): boolean {
  if (answer.statusCode === 200) return true;
  if (writingRefusals.includes(String(answer.code))) return true;
  const data = answer.body.data as { succeeded?: unknown[] } | undefined;
  return answer.code === '60027' && (data?.succeeded?.length ?? 0) > 0;
}

/**
 * Sends FUZZ_RUNS generated calls of one operation, checking each answer's envelope and that a
 * refused call left `state` (the caller's tenant) as it was. Returns how often each code came.
 */
export async function fuzzOperation(
  h: Harness,
  op: Operation,
  setup: FuzzSetup,
  state: () => Promise<TenantState>,
  writingRefusals: readonly string[] = [],
): Promise<Map<string, number>> {
  let last = await state();
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(requests(op, setup), async (request) => {
      const answer = await send(h, op, request);
      const now = await state();
      if (!mayHaveWritten(answer, writingRefusals)) {
        expect(changedTables(last, now), `${answer.code} changed data: ${request.url}`).toEqual([]);
      }
      last = now;
      seen.set(String(answer.code), (seen.get(String(answer.code)) ?? 0) + 1);
    }),
    { numRuns: FUZZ_RUNS },
  );
  return seen;
}
