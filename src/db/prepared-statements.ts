import { createHash } from 'node:crypto';
import type pg from 'pg';

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
