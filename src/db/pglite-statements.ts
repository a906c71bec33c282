import { parse, protocol, type PGlite, type Results } from '@electric-sql/pglite';

/**
 * Statements the embedded database keeps prepared: texts beyond this many (Kysely writes an IN
 * list of n values as n placeholders, so texts can be many) run unprepared, as before.
 */
const MAX_PREPARED = 500;

const instances = new WeakMap<PGlite, PgliteStatements>();

interface Prepared {
  name: string;
  /** The parameter types PostgreSQL inferred, for PGlite's serializers. */
  parameterTypes: number[];
}

/**
 * Parameterised statements on PGlite as named prepared statements: parsed, described and planned
 * once, then each run is one protocol exchange (bind, describe, execute, sync) instead of the six
 * of PGlite's query(). On the embedded database, where every statement runs on the server's own
 * thread, this is most of a read's cost. Parameters are serialised by PGlite's own serializers for
 * the types PostgreSQL inferred, and rows parsed by its parsers, exactly as query() does.
 */
export class PgliteStatements {
  private readonly prepared = new Map<string, Prepared>();
  /** Names are never reused: one whose preparation failed half-way may exist in the session. */
  private named = 0;

  private constructor(private readonly pg: PGlite) {}

  /** One per PGlite instance: its prepared statements are the session's, whoever runs them. */
  static of(pg: PGlite): PgliteStatements {
    let statements = instances.get(pg);
    if (statements === undefined) {
      statements = new PgliteStatements(pg);
      instances.set(pg, statements);
    }
    return statements;
  }

  async query(text: string, parameters: readonly unknown[]): Promise<Results> {
    const statement = await this.prepare(text);
    if (statement === undefined) return this.pg.query(text, [...parameters]);
    const { serializers } = this.pg;
    const values = parameters.map((value, i) => {
      if (value === null || value === undefined) return null;
      const serializer = serializers[statement.parameterTypes[i] ?? 0];
      return serializer ? serializer(value) : String(value);
    });
    const message = concat([
      protocol.serialize.bind({ statement: statement.name, values }),
      protocol.serialize.describe({ type: 'P' }),
      protocol.serialize.execute({}),
      protocol.serialize.sync(),
    ]);
    const { messages } = await this.pg.execProtocol(message, {});
    const results = parse.parseResults(messages, this.pg.parsers);
    return results.at(-1) ?? { rows: [], fields: [], affectedRows: 0 };
  }

  /** The statement prepared for `text`, preparing it now; undefined past MAX_PREPARED. */
  private async prepare(text: string): Promise<Prepared | undefined> {
    const known = this.prepared.get(text);
    if (known !== undefined) return known;
    if (this.prepared.size >= MAX_PREPARED) return undefined;
    this.named += 1;
    const name = `kw_embedded_${this.named}`;
    const message = concat([
      protocol.serialize.parse({ name, text }),
      protocol.serialize.describe({ type: 'S', name }),
      protocol.serialize.sync(),
    ]);
    const { messages } = await this.pg.execProtocol(message, {});
    const statement = { name, parameterTypes: parse.parseDescribeStatementResults(messages) };
    this.prepared.set(text, statement);
    return statement;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const message = new Uint8Array(parts.reduce((n, part) => n + part.length, 0));
  let at = 0;
  for (const part of parts) {
    message.set(part, at);
    at += part.length;
  }
  return message;
}
