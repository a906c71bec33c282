/**
 * No connection of the pool came free within DATABASE_POOL_WAIT_MS: the database answers, but more
 * calls want it at once than the pool holds. An overload, answered 503 with Retry-After; a
 * database that does not answer is a fault ("500"), not this.
 */
export class DatabaseBusyError extends Error {
  constructor(readonly waitedMs: number) {
    super(`no database connection came free within ${waitedMs} ms`);
    this.name = 'DatabaseBusyError';
  }
}

/**
 * node-postgres's pool gives a waiting caller this error when its wait ends with every connection
 * still taken; a connection that could not be made in time ends with another one ("Connection
 * terminated due to connection timeout"). test/db/postgres-pool.test.ts holds both to their text.
 */
const POOL_WAIT_TIMEOUT = 'timeout exceeded when trying to connect';

export function isPoolWaitTimeout(error: unknown): boolean {
  return error instanceof Error && error.message === POOL_WAIT_TIMEOUT;
}
