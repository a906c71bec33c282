import { createHash } from 'node:crypto';
import { CompiledQuery, sql, type Kysely, type RawBuilder } from 'kysely';
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

const SLOT = '\u0000slot:';

/** Placeholders for a prepared query's values; typed `never` so they fit any operand. */
export type Slots<K extends string> = Record<K, RawBuilder<never>>;

interface Compiled<K extends string> {
  text: string;
  parameters: readonly unknown[];
  /** The slot each parameter stands for, or undefined for a constant of the query. */
  bindings: Array<K | undefined>;
}

/**
 * A prepared statement (see PREPARED) that Kysely builds and compiles once per database handle:
 * `build` gets a placeholder for each slot, and each run binds the values in their places. For
 * hot statements of fixed text, whose Kysely build and compilation would otherwise cost the server
 * more than PostgreSQL spends running them.
 */
export function preparedQuery<Row, K extends string>(
  slots: readonly K[],
  build: (db: Kysely<Database>, slot: Slots<K>) => RawBuilder<unknown>,
): (db: Kysely<Database>, values: Record<K, unknown>) => Promise<Row[]> {
  const compiledFor = new WeakMap<Kysely<Database>, Compiled<K>>();
  const placeholders = Object.fromEntries(slots.map((k) => [k, sql.val(`${SLOT}${k}`)])) as Slots<K>;
  const compile = (db: Kysely<Database>): Compiled<K> => {
    const compiled = build(db, placeholders).compile(db);
    return {
      text: `${PREPARED}\n${compiled.sql}`,
      parameters: compiled.parameters,
      bindings: compiled.parameters.map((p) =>
        typeof p === 'string' && p.startsWith(SLOT) ? (p.slice(SLOT.length) as K) : undefined,
      ),
    };
  };
  return async (db, values) => {
    let compiled = compiledFor.get(db);
    if (compiled === undefined) {
      compiled = compile(db);
      compiledFor.set(db, compiled);
    }
    const { bindings } = compiled;
    const parameters = compiled.parameters.map((p, i) => {
      const slot = bindings[i];
      return slot === undefined ? p : values[slot];
    });
    return (await db.executeQuery<Row>(CompiledQuery.raw(compiled.text, parameters))).rows;
  };
}
