import { AsyncLocalStorage } from 'node:async_hooks';
import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';

/** Raised at the statement after a call has held its connection past its time limit. */
export class TransactionTimeLimitError extends Error {
  constructor(limitMs: number) {
    super(`the transaction held the database longer than ${limitMs} ms and was rolled back`);
    this.name = 'TransactionTimeLimitError';
  }
}

const limits = new AsyncLocalStorage<number>();

/**
 * Runs `work` with a time limit on every connection it takes: a transaction (or a lone statement)
 * that has held its connection `limitMs` or longer fails at its next statement and rolls back.
 * Requests and async batches run under it; migrations and housekeeping do not.
 */
export function withTransactionTimeLimit<T>(limitMs: number, work: () => T): T {
  return limits.run(limitMs, work);
}

/**
 * A connection that refuses statements once its holder's time is up. The rollback that follows is
 * let through, so nothing of the call stays. The limit is checked between statements: on the
 * embedded database a statement cannot be interrupted, so writes are cut into statements of
 * bounded size (order-assets.repository); on PostgreSQL statement_timeout bounds each statement.
 */
class TimedConnection implements DatabaseConnection {
  private readonly since = performance.now();

  constructor(
    readonly inner: DatabaseConnection,
    private readonly limitMs: number,
  ) {}

  check(): void {
    if (performance.now() - this.since >= this.limitMs) throw new TransactionTimeLimitError(this.limitMs);
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    this.check();
    return this.inner.executeQuery<R>(query);
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    this.check();
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

const innerOf = (connection: DatabaseConnection): DatabaseConnection =>
  connection instanceof TimedConnection ? connection.inner : connection;

class TimeLimitedDriver implements Driver {
  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // Read before waiting: the wait for a connection is not time the call holds one.
    const limitMs = limits.getStore();
    const connection = await this.inner.acquireConnection();
    return limitMs === undefined ? connection : new TimedConnection(connection, limitMs);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // Past the limit a transaction does not commit: the caller rolls it back and answers a fault.
    if (connection instanceof TimedConnection) connection.check();
    return this.inner.commitTransaction(innerOf(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(innerOf(connection));
  }

  async savepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    if (!this.inner.savepoint) throw new Error('the driver has no savepoints');
    if (connection instanceof TimedConnection) connection.check();
    return this.inner.savepoint(innerOf(connection), name, compile);
  }

  async rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    if (!this.inner.rollbackToSavepoint) throw new Error('the driver has no savepoints');
    return this.inner.rollbackToSavepoint(innerOf(connection), name, compile);
  }

  async releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    if (!this.inner.releaseSavepoint) throw new Error('the driver has no savepoints');
    return this.inner.releaseSavepoint(innerOf(connection), name, compile);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

/** The dialect with withTransactionTimeLimit honoured by its driver. */
export function timeLimited(dialect: Dialect): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createDriver: () => new TimeLimitedDriver(dialect.createDriver()),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}
