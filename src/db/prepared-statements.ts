import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Compilable, type InferResult, type Kysely, type RawBuilder } from 'kysely';
import type pg from 'pg';
import type { Database } from './schema.js';

/**
 * A statement whose text starts with this comment is run as a named prepared statement on
 * PostgreSQL: parsed and planned once per connection instead of on every call. Only for statements
 * whose text never varies (arrays go in as parameters), so each connection holds a handful of them.
 * On the embedded database the comment is only a comment.
 */
export const PREPARED = '/* prepared */';

type Query = (text: unknown, values?: unknown) => unknown;

/** Names by text: the few marked texts are hashed once, not on every call. */
const names = new Map<string, string>();

function statementName(text: string): string {
  const known = names.get(text);
  if (known !== undefined) return known;
  const name = `kw_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
  // A bound in case something marks statements of varying text: they then lose only the cache.
  if (names.size < 1000) names.set(text, name);
  return name;
}

/** Routes marked statements of this client through a name; everything else is untouched. */
export function prepareMarkedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  const prepared: Query = (text, values) =>
    typeof text === 'string' && text.startsWith(PREPARED)
      ? query({ name: statementName(text), text, values })
      : query(text, values);
  Object.assign(client, { query: prepared });
}

/**
 * Runs a Kysely query as a prepared statement (see PREPARED): for hot queries whose text is the
 * same on every call, i.e. lists go in as array parameters (`= any($1::text[])`), not as `in (…)`.
 */
export async function executePrepared<Q extends Compilable & { execute(): Promise<unknown[]> }>(
  db: Kysely<Database>,
  query: Q,
): Promise<InferResult<Q>> {
  const result = await sql<InferResult<Q>[number]>`${sql.raw(PREPARED)} ${query}`.execute(db);
  return result.rows as InferResult<Q>;
}

const SLOT = '\u0000slot:';

/**
 * A prepared statement built and compiled by Kysely once: `build` gets a placeholder for each slot,
 * and each run binds the slots' values in their places. For the hottest statement, whose Kysely
 * compilation would otherwise cost more than its execution.
 */
export function compileOnce<Row, K extends string>(
  db: Kysely<Database>,
  slots: readonly K[],
  build: (slot: Record<K, RawBuilder<unknown>>) => RawBuilder<unknown>,
): (values: Record<K, unknown>) => Promise<Row[]> {
  const placeholders = Object.fromEntries(slots.map((k) => [k, sql.val(`${SLOT}${k}`)])) as Record<
    K,
    RawBuilder<unknown>
  >;
  const compiled = build(placeholders).compile(db);
  const bindings = compiled.parameters.map((p) =>
    typeof p === 'string' && p.startsWith(SLOT) ? (p.slice(SLOT.length) as K) : undefined,
  );
  const text = `${PREPARED}\n${compiled.sql}`;
  return async (values) => {
    const parameters = compiled.parameters.map((p, i) => {
      const slot = bindings[i];
      return slot === undefined ? p : values[slot];
    });
    return (await db.executeQuery<Row>(CompiledQuery.raw(text, parameters))).rows;
  };
}
