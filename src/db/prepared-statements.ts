import { createHash } from 'node:crypto';
import { sql, type Compilable, type InferResult, type Kysely } from 'kysely';
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

function statementName(text: string): string {
  return `kw_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`;
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
