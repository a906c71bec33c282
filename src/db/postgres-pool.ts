import type { PostgresPool } from 'kysely';
import pg from 'pg';
import { DatabaseBusyError, isPoolWaitTimeout } from './busy.js';
import { INT8_OID, parseInt8 } from './int8.js';
import type { PostgresOptions } from './postgres-options.js';
import { prepareMarkedStatements } from './prepared-statements.js';
import { DatabaseWatchdog } from './watchdog.js';

/**
 * node-postgres gives the pool's clients the pool's own connectionTimeoutMillis, which is the wait
 * for a free connection; a new connection to a silent database must be given up sooner than a
 * patient pool wait, so the clients carry the silence bound instead.
 */
function clientConnectingWithin(ms: number): new () => pg.ClientBase {
  return class extends pg.Client {
    constructor(config?: string | pg.ClientConfig) {
      super({
        ...(typeof config === 'string' ? { connectionString: config } : config),
        connectionTimeoutMillis: ms,
      });
    }
  };
}

export interface PostgresConnections {
  /** For Kysely's PostgresDialect: a wait past poolWaitMs fails with DatabaseBusyError. */
  pool: PostgresPool;
  watchdog: DatabaseWatchdog;
}

export function postgresConnections(url: string, options: PostgresOptions): PostgresConnections {
  const client: pg.ClientConfig = {
    connectionString: url,
    // The server cuts a statement that runs this long; what must run longer (migrations, a
    // backup's sums) says so in its own transaction.
    statement_timeout: 15000,
    keepAlive: true,
    types: {
      getTypeParser: (oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format),
    },
  };
  const watchdog = new DatabaseWatchdog(client, options.silenceMs);
  const pool = new pg.Pool({
    ...client,
    max: options.poolSize,
    connectionTimeoutMillis: options.poolWaitMs,
    Client: clientConnectingWithin(options.silenceMs),
  });
  // An idle client whose backend was terminated emits an error; the pool replaces it.
  pool.on('error', () => undefined);
  // So does a client in use: its query has already failed (the caller answers "500"), and the pool
  // drops it on release as no longer queryable. Unheard, that error would end the whole process.
  pool.on('connect', (connected) => {
    connected.on('error', () => undefined);
    prepareMarkedStatements(connected);
    watchdog.watch(connected);
  });
  return {
    pool: {
      async connect() {
        try {
          return await pool.connect();
        } catch (error) {
          throw isPoolWaitTimeout(error) ? new DatabaseBusyError(options.poolWaitMs) : error;
        }
      },
      end: () => pool.end(),
    },
    watchdog,
  };
}
