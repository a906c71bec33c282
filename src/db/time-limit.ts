import type {
  CompiledQuery,
  DatabaseConnection,
  Dialect,
  Driver,
  Kysely,
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

/** A statement on a timed connection past its time fails here, before it reaches the database. */
const checkTime = (connection: DatabaseConnection): void => {
  if (connection instanceof TimedConnection) connection.check();
};

/**
 * One driver (one pool; on the embedded database, its single session and the queue in front of
 * it) for the handle's own Kysely and every time-limited view of it, initialised and destroyed
 * once whichever instance asks first: the handle's own may never have run a statement.
 */
class SharedConnections {
  private initialised: Promise<void> | undefined;
  private destroyed: Promise<void> | undefined;

  constructor(readonly driver: Driver) {}

  init(): Promise<void> {
    this.initialised ??= this.driver.init();
    return this.initialised;
  }

  destroy(): Promise<void> {
    this.destroyed ??= this.driver.destroy();
    return this.destroyed;
  }
}

/**
 * One Kysely instance's driver over the shared connections: the handle's own (no limit, and it
 * closes them), or a view whose connections refuse statements once held `limitMs` or longer.
 */
class ViewDriver implements Driver {
  constructor(
    private readonly shared: SharedConnections,
    private readonly limitMs: number | undefined,
  ) {}

  private get inner(): Driver {
    return this.shared.driver;
  }

  init(): Promise<void> {
    return this.shared.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // The clock starts once the connection is held: waiting for it is not holding it.
    const connection = await this.inner.acquireConnection();
    return this.limitMs === undefined ? connection : new TimedConnection(connection, this.limitMs);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(innerOf(connection), settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    // Past the limit a transaction does not commit: the caller rolls it back and answers a fault.
    checkTime(connection);
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
    checkTime(connection);
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

  // A view borrows the connections; the handle's own instance closes them.
  destroy(): Promise<void> {
    return this.limitMs === undefined ? this.shared.destroy() : Promise.resolve();
  }
}

/**
 * A dialect whose connections can be shared with time-limited views (`limitedTo`). The limit is a
 * property of the Kysely instance, not of the call: an AsyncLocalStorage scope per request would
 * turn on promise hooks for the whole process, which cost the read path about a quarter of its CPU.
 */
export class ShareableDialect implements Dialect {
  private shared: SharedConnections | undefined;

  constructor(private readonly inner: Dialect) {}

  private connections(): SharedConnections {
    this.shared ??= new SharedConnections(this.inner.createDriver());
    return this.shared;
  }

  createAdapter() {
    return this.inner.createAdapter();
  }

  createDriver(): Driver {
    return new ViewDriver(this.connections(), undefined);
  }

  createQueryCompiler() {
    return this.inner.createQueryCompiler();
  }

  createIntrospector(db: Kysely<unknown>) {
    return this.inner.createIntrospector(db);
  }

  /**
   * Closes the connections. Destroying the handle's own Kysely does not when that instance never
   * ran a statement (Kysely initialises a driver on first use), as when only views were used.
   */
  destroy(): Promise<void> {
    return this.connections().destroy();
  }

  /**
   * The same dialect over the same connections, where a transaction (or a lone statement) that has
   * held its connection `limitMs` or longer fails at its next statement and rolls back.
   */
  limitedTo(limitMs: number): Dialect {
    return {
      createAdapter: () => this.createAdapter(),
      createDriver: () => new ViewDriver(this.connections(), limitMs),
      createQueryCompiler: () => this.createQueryCompiler(),
      createIntrospector: (db) => this.createIntrospector(db),
    };
  }
}
