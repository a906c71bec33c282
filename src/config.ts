import path from 'node:path';

export type Region = 'cn' | 'sg';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  region: Region;
  tokenTtlSeconds: number;
  adminKey: string | undefined;
  logLevel: string;
  rateLimitPerMinute: number;
  /** /oauth2/token requests per minute per client_id and per remote address. */
  tokenRate: { perClient: number; perAddress: number };
  /** Bounds on connections, so slow or idle clients cannot hold them all. */
  connections: {
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
    max: number;
  };
  limits: {
    ordersPerCall: number;
    arrayElements: number;
    instanceRowsPerCall: number;
    bodyBytes: number;
    /** How long a request or an async batch may hold a database connection in one go. */
    transactionLimitMs: number;
  };
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  }
  return Number(raw);
}

/** Reads the environment once; a bad value stops the process before it listens. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const region = env.REGION ?? 'cn';
  if (region !== 'cn' && region !== 'sg') {
    throw new Error(`REGION must be "cn" or "sg", got "${region}"`);
  }
  const databaseUrl = env.DATABASE_URL === '' ? undefined : env.DATABASE_URL;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const requestTimeoutMs = intFrom(env, 'REQUEST_TIMEOUT_MS', 30000, 1);
  const headersTimeoutMs = intFrom(env, 'HEADERS_TIMEOUT_MS', 10000, 1);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error('HEADERS_TIMEOUT_MS must not be more than REQUEST_TIMEOUT_MS');
  }
  return {
    port: intFrom(env, 'PORT', 8080, 0),
    host: env.HOST ?? '127.0.0.1',
    databaseUrl,
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    redisUrl: env.REDIS_URL === '' ? undefined : env.REDIS_URL,
    region,
    tokenTtlSeconds: intFrom(env, 'TOKEN_TTL_SECONDS', 7200, 1),
    adminKey: env.KEYWARD_ADMIN_KEY === '' ? undefined : env.KEYWARD_ADMIN_KEY,
    logLevel: env.LOG_LEVEL ?? 'info',
    rateLimitPerMinute: intFrom(env, 'RATE_LIMIT_PER_MINUTE', 60000, 1),
    tokenRate: {
      perClient: intFrom(env, 'TOKEN_RATE_PER_CLIENT', 300, 1),
      perAddress: intFrom(env, 'TOKEN_RATE_PER_IP', 600, 1),
    },
    connections: {
      requestTimeoutMs,
      headersTimeoutMs,
      keepAliveTimeoutMs: intFrom(env, 'KEEPALIVE_TIMEOUT_MS', 5000, 1),
      max: intFrom(env, 'MAX_CONNECTIONS', 1024, 1),
    },
    limits: {
      ordersPerCall: intFrom(env, 'ORDER_BATCH_LIMIT', 200, 1),
      arrayElements: intFrom(env, 'ARRAY_LIMIT', 1000, 1),
      // The embedded database writes on the server's own thread, some ten times slower than a
      // PostgreSQL server: its default keeps the largest call to a second or two there.
      instanceRowsPerCall: intFrom(env, 'INSTANCE_ROWS_LIMIT', databaseUrl === undefined ? 20000 : 100000, 1),
      bodyBytes: intFrom(env, 'BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
      transactionLimitMs: intFrom(env, 'TRANSACTION_LIMIT_MS', 5000, 1),
    },
  };
}
