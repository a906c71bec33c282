/** How a server uses PostgreSQL's connections (docs/operations.md, "Connections and overload"). */
export interface PostgresOptions {
  /** DATABASE_POOL_SIZE: connections the pool opens at most. */
  poolSize: number;
  /** DATABASE_POOL_WAIT_MS: how long a call waits for one to come free before it is answered 503. */
  poolWaitMs: number;
  /** DATABASE_SILENCE_MS: how long the database may leave a call unanswered before it counts as gone. */
  silenceMs: number;
}

export const POSTGRES_DEFAULTS: PostgresOptions = { poolSize: 10, poolWaitMs: 5000, silenceMs: 5000 };
