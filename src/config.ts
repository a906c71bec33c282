import path from 'node:path';
import { POSTGRES_DEFAULTS, type PostgresOptions } from './db/postgres-options.js';
import { parseEd25519PrivateKey, type Ed25519PrivateJwk } from './domain/runtime-keys/ed25519.js';
import { ssoConfigFrom, type SsoConfig } from './sso-config.js';

export type Region = 'cn' | 'sg';

/** `pretty`: readable lines and a start banner for a person at a terminal; `json`: one object a line. */
export type LogFormat = 'pretty' | 'json';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | undefined;
  /** The PostgreSQL pool and how a silent database is noticed (docs/operations.md); unused embedded. */
  database: PostgresOptions;
  /**
   * EVENT_LOOP_DELAY_LIMIT_MS: past this mean event-loop delay over a second, calls are answered 503
   * with Retry-After until it falls back (@fastify/under-pressure); 0 turns the check off.
   */
  eventLoopDelayLimitMs: number;
  dataDir: string;
  redisUrl: string | undefined;
  region: Region;
  tokenTtlSeconds: number;
  adminKey: string | undefined;
  /**
   * ADMIN_KEY_ENABLED=0 turns the admin key off once an owner exists: the admin API then takes
   * operators' personal tokens only, and the console's key sign-in refuses. On by default.
   */
  adminKeyEnabled: boolean;
  logLevel: string;
  logFormat: LogFormat;
  rateLimitPerMinute: number;
  /** Fastify's trustProxy: whose X-Forwarded-For to believe for a caller's address (none: false). */
  trustProxy: false | number | string[];
  /**
   * Where /admin/* is served apart from the public listener (ADMIN_HOST, ADMIN_PORT); undefined
   * when it is served on the public listener, which is only so when HOST is a loopback address.
   */
  adminListener: { host: string; port: number } | undefined;
  /** COOKIE_SECURE=1: console cookies are `Secure` even when the request did not come over https. */
  cookieSecure: boolean;
  /**
   * RUNTIME_SIGNING_KEY: the one key offline leases are signed with; unset, keys live in
   * DATA_DIR/runtime-keys.json and `keyward keys rotate` replaces them.
   */
  runtimeSigningKey: Ed25519PrivateJwk | undefined;
  /** When set, /metrics answers only `Authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined;
  /**
   * METRICS_PRODUCT_LABELS=1: seats in use per product (its crmProductId, a tenant's name for it)
   * rather than one total, for an operator who keeps /metrics to himself.
   */
  metricsProductLabels: boolean;
  /**
   * Before authentication, per minute: /oauth2/token requests (and console sign-ins) from one
   * remote address, and the failed ones of one client from one address.
   */
  tokenRate: { perAddress: number; failuresPerClientAddress: number };
  /** Bounds on connections, so slow or idle clients cannot hold them all. */
  connections: {
    requestTimeoutMs: number;
    headersTimeoutMs: number;
    keepAliveTimeoutMs: number;
    max: number;
  };
  /**
   * The license runtime: an online lease lives RUNTIME_LEASE_SECONDS past its last heartbeat;
   * copies are told to heartbeat five times within that, so one lost heartbeat costs no seat.
   */
  runtime: { leaseSeconds: number; heartbeatSeconds: number; machineRateLimitPerMinute: number };
  /**
   * Usage history (docs/operations.md): raw leases are pruned USAGE_LEASE_RETENTION_DAYS after
   * their seat was free, hourly rollups kept USAGE_HOURLY_RETENTION_DAYS (then only their days
   * remain), daily rollups USAGE_RETENTION_DAYS.
   */
  usage: { leaseRetentionDays: number; hourlyRetentionDays: number; rollupRetentionDays: number };
  /** Outbound webhook deliveries (docs/webhooks.md). */
  webhooks: WebhookConfig;
  /** Renewals in sight (docs/operations.md). */
  licenses: LicenseNoticeConfig;
  /** Backups (docs/operations.md). */
  backup: BackupConfig;
  /** Operators' single sign-on (OIDC_*, docs/operators.md); unset, operators sign in by password. */
  sso: SsoConfig | undefined;
  limits: {
    ordersPerCall: number;
    arrayElements: number;
    instanceRowsPerCall: number;
    bodyBytes: number;
    /** How long a request or an async batch may hold a database connection in one go. */
    transactionLimitMs: number;
    /** MEMBER_PAGE_CACHE_MEMBERS: members that member op 5's kept pages may hold in all; 0 keeps none. */
    keptPageMembers: number;
  };
}

export interface WebhookConfig {
  /** WEBHOOK_ALLOW_HTTP=1: plain http endpoints allowed (a local receiver in development). */
  allowHttp: boolean;
  /** WEBHOOK_ALLOW_PRIVATE=1: endpoints on loopback, private, link-local or metadata addresses allowed. */
  allowPrivate: boolean;
  /** WEBHOOK_CONNECT_TIMEOUT_MS: how long a connection to an endpoint may take. */
  connectTimeoutMs: number;
  /** WEBHOOK_TIMEOUT_MS: how long one attempt may take in all, connecting to reading the answer. */
  timeoutMs: number;
  /** WEBHOOK_POLL_MS: how often the delivery worker looks for due deliveries when it found none. */
  pollMs: number;
  /** WEBHOOK_CONCURRENCY: deliveries one instance sends at once (an attempt slower than a second stops counting). */
  concurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries one endpoint has in flight at once, over every instance. */
  endpointConcurrency: number;
  /** WEBHOOK_WORKER=0: this instance sends no deliveries (others, or a dedicated instance, do). */
  worker: boolean;
  /** WEBHOOK_RETENTION_DAYS: how long events, deliveries and attempts are kept (and replayable). */
  retentionDays: number;
}

export interface LicenseNoticeConfig {
  /** LICENSE_EXPIRING_DAYS: the consoles and `keyward licenses expiring` list licenses ending within it. */
  expiringDays: number;
  /**
   * LICENSE_EXPIRING_NOTICE_DAYS: the days before a license's end `license.expiring` is sent at,
   * largest first; empty (`none`) sends none. `license.expired` is sent whatever this holds.
   */
  noticeDays: number[];
}

export interface BackupConfig {
  /** BACKUP_DIR: where scheduled backups go; unset, none are taken. */
  dir: string | undefined;
  /** BACKUP_EVERY (`6h`, `1d`, `30m`): how often, in milliseconds; unset, none are taken. */
  everyMs: number | undefined;
  /** BACKUP_KEEP: how many scheduled backups are kept; older ones are deleted. */
  keep: number;
  /** BACKUP_PASSPHRASE: backups are encrypted with it (and restores read it). Never logged. */
  passphrase: string | undefined;
  /**
   * BACKUP_ENCRYPT=0: backups are written unencrypted (`keyward backup --no-encrypt` for every
   * one). Otherwise a backup is encrypted, and needs BACKUP_PASSPHRASE or a passphrase file.
   */
  encrypt: boolean;
}

const UNIT_MS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** BACKUP_EVERY: a whole number and a unit, `s`, `m`, `h` or `d` (`6h`, `1d`). */
function durationFrom(name: string, raw: string | undefined): number | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const match = /^([0-9]+)([smhd])$/.exec(raw.trim());
  const ms = match === null ? 0 : Number(match[1]) * (UNIT_MS[match[2] ?? ''] ?? 0);
  if (ms < 1000) throw new Error(`${name} must be a duration such as 30m, 6h or 1d, got "${raw}"`);
  return ms;
}

function backupFrom(env: NodeJS.ProcessEnv): BackupConfig {
  const dir =
    env.BACKUP_DIR === undefined || env.BACKUP_DIR === '' ? undefined : path.resolve(env.BACKUP_DIR);
  const everyMs = durationFrom('BACKUP_EVERY', env.BACKUP_EVERY);
  if ((dir === undefined) !== (everyMs === undefined)) {
    throw new Error('BACKUP_DIR and BACKUP_EVERY go together: set both for scheduled backups, or neither');
  }
  const passphrase = env.BACKUP_PASSPHRASE === '' ? undefined : env.BACKUP_PASSPHRASE;
  const encrypt = env.BACKUP_ENCRYPT !== '0';
  if (passphrase !== undefined && !encrypt) {
    throw new Error('BACKUP_ENCRYPT=0 and BACKUP_PASSPHRASE contradict each other: unset one of them');
  }
  // Scheduled backups hold every license and the signing keys: never written in the clear unasked.
  if (dir !== undefined && passphrase === undefined && encrypt) {
    throw new Error(
      'BACKUP_DIR: scheduled backups are encrypted; set BACKUP_PASSPHRASE, or BACKUP_ENCRYPT=0 to write them unencrypted',
    );
  }
  return { dir, everyMs, keep: intFrom(env, 'BACKUP_KEEP', 7, 1), passphrase, encrypt };
}

function intFrom(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^[0-9]+$/.test(raw) || Number(raw) < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
  }
  return Number(raw);
}

/** LICENSE_EXPIRING_NOTICE_DAYS: whole days of at least 1, comma-separated (`30,7,1`), or `none`. */
function noticeDaysFrom(raw: string | undefined): number[] {
  if (raw === undefined || raw.trim() === '') return [30, 7, 1];
  if (raw.trim() === 'none') return [];
  const days = raw.split(',').map((part) => part.trim());
  if (days.some((d) => !/^[0-9]{1,4}$/.test(d) || Number(d) < 1)) {
    throw new Error(
      `LICENSE_EXPIRING_NOTICE_DAYS must be whole days of at least 1, comma-separated (30,7,1), or none; got "${raw}"`,
    );
  }
  return [...new Set(days.map(Number))].sort((a, b) => b - a);
}

/**
 * TOKEN_RATE_PER_CLIENT counted a client's requests from every address together, so one address
 * could use them all up; its replacement counts failures per client and address. Refused rather
 * than ignored, so that a limit someone set is not silently dropped.
 */
function tokenRateFrom(env: NodeJS.ProcessEnv): Config['tokenRate'] {
  if (env.TOKEN_RATE_PER_CLIENT !== undefined && env.TOKEN_RATE_PER_CLIENT !== '') {
    throw new Error(
      'TOKEN_RATE_PER_CLIENT is no longer read: a client is limited per address, on its failed ' +
        'requests (TOKEN_FAILS_PER_CLIENT_IP); unset it',
    );
  }
  return {
    perAddress: intFrom(env, 'TOKEN_RATE_PER_IP', 600, 1),
    failuresPerClientAddress: intFrom(env, 'TOKEN_FAILS_PER_CLIENT_IP', 60, 1),
  };
}

/**
 * TRUST_PROXY: unset, the caller's address is the connection's peer and X-Forwarded-For is
 * ignored (a client could write anything there); a whole number, that many proxies in front;
 * else the comma-separated addresses or CIDR ranges of the proxies whose header is believed.
 */
function trustProxyFrom(raw: string | undefined): false | number | string[] {
  if (raw === undefined || raw.trim() === '') return false;
  if (/^[0-9]+$/.test(raw.trim())) return Number(raw.trim()) === 0 ? false : Number(raw.trim());
  const proxies = raw.split(',').map((p) => p.trim());
  if (proxies.some((p) => !/^[0-9A-Fa-f:.]+(\/[0-9]{1,3})?$/.test(p))) {
    throw new Error(`TRUST_PROXY must be a number of proxies or a list of proxy addresses, got "${raw}"`);
  }
  return proxies;
}

/** RUNTIME_SIGNING_KEY, checked whole at start; a bad value is named, never shown. */
function runtimeSigningKeyFrom(raw: string | undefined): Ed25519PrivateJwk | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  const key = parseEd25519PrivateKey(raw);
  if (key === undefined) {
    throw new Error(
      'RUNTIME_SIGNING_KEY must be an Ed25519 private key: a PKCS#8 PEM (BEGIN PRIVATE KEY) or a private JWK (kty OKP, crv Ed25519, d, x)',
    );
  }
  return key;
}

/** Whether `host` reaches this machine only: 127.0.0.0/8, ::1 or localhost. */
export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^(::ffff:)?127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/**
 * The URL this machine reaches a listener on `host:port` at: a wildcard address (all interfaces) is
 * reached at 127.0.0.1, an IPv6 address goes in brackets.
 */
export function localUrl(host: string, port: number): string {
  const wildcard = host === '0.0.0.0' || host === '::' || host === '[::]';
  const name = wildcard ? '127.0.0.1' : host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/**
 * The admin API may create applications and set passwords: never on a public address by
 * accident. With ADMIN_PORT it has a listener of its own (ADMIN_HOST, default 127.0.0.1). Without
 * it, a public HOST gets one at 127.0.0.1:PORT+1 (a random port when PORT is 0); a loopback HOST
 * keeps it on the one listener.
 */
function adminListenerFrom(env: NodeJS.ProcessEnv, host: string, port: number): Config['adminListener'] {
  const adminHost = env.ADMIN_HOST === undefined || env.ADMIN_HOST === '' ? '127.0.0.1' : env.ADMIN_HOST;
  if (env.ADMIN_PORT !== undefined && env.ADMIN_PORT !== '') {
    return { host: adminHost, port: intFrom(env, 'ADMIN_PORT', 0, 0) };
  }
  if (isLoopbackHost(host)) return undefined;
  if (port >= 65535)
    throw new Error(`HOST ${host} is not a loopback address: set ADMIN_PORT for the admin API`);
  return { host: adminHost, port: port === 0 ? 0 : port + 1 };
}

/** LOG_FORMAT: unset, pretty for a person at a terminal and JSON lines for anything that reads them. */
function logFormatFrom(raw: string | undefined, stdoutIsTerminal: boolean): LogFormat {
  if (raw === undefined || raw === '') return stdoutIsTerminal ? 'pretty' : 'json';
  if (raw !== 'pretty' && raw !== 'json') {
    throw new Error(`LOG_FORMAT must be "pretty" or "json", got "${raw}"`);
  }
  return raw;
}

/**
 * Reads the environment once; a bad value stops the process before it listens. Whether stdout is a
 * terminal only chooses LOG_FORMAT's default.
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  stdoutIsTerminal: boolean = process.stdout.isTTY === true,
): Config {
  const region = env.REGION ?? 'cn';
  if (region !== 'cn' && region !== 'sg') {
    throw new Error(`REGION must be "cn" or "sg", got "${region}"`);
  }
  const databaseUrl = env.DATABASE_URL === '' ? undefined : env.DATABASE_URL;
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error('DATABASE_URL must start with postgres:// or postgresql://');
  }
  const port = intFrom(env, 'PORT', 8080, 0);
  const host = env.HOST ?? '127.0.0.1';
  const requestTimeoutMs = intFrom(env, 'REQUEST_TIMEOUT_MS', 30000, 1);
  const headersTimeoutMs = intFrom(env, 'HEADERS_TIMEOUT_MS', 10000, 1);
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new Error('HEADERS_TIMEOUT_MS must not be more than REQUEST_TIMEOUT_MS');
  }
  const leaseSeconds = intFrom(env, 'RUNTIME_LEASE_SECONDS', 300, 30);
  return {
    port,
    host,
    databaseUrl,
    database: {
      poolSize: intFrom(env, 'DATABASE_POOL_SIZE', POSTGRES_DEFAULTS.poolSize, 1),
      poolWaitMs: intFrom(env, 'DATABASE_POOL_WAIT_MS', POSTGRES_DEFAULTS.poolWaitMs, 1),
      // A fifth of it is how often the watchdog looks: below a second it would ask too often.
      silenceMs: intFrom(env, 'DATABASE_SILENCE_MS', POSTGRES_DEFAULTS.silenceMs, 1000),
    },
    // Generous on PostgreSQL: a loaded two-core machine running the test suite never reaches it;
    // an instance of its own can take less (docs/operations.md). Off on the embedded database,
    // whose statements run on the event loop: a long one there is the database at work, not an
    // overload, and shedding the calls behind it would only fail them.
    eventLoopDelayLimitMs: intFrom(env, 'EVENT_LOOP_DELAY_LIMIT_MS', databaseUrl === undefined ? 0 : 2000, 0),
    dataDir: path.resolve(env.DATA_DIR ?? './data'),
    redisUrl: env.REDIS_URL === '' ? undefined : env.REDIS_URL,
    region,
    tokenTtlSeconds: intFrom(env, 'TOKEN_TTL_SECONDS', 7200, 1),
    adminKey: env.KEYWARD_ADMIN_KEY === '' ? undefined : env.KEYWARD_ADMIN_KEY,
    adminKeyEnabled: env.ADMIN_KEY_ENABLED !== '0',
    logLevel: env.LOG_LEVEL ?? 'info',
    logFormat: logFormatFrom(env.LOG_FORMAT, stdoutIsTerminal),
    rateLimitPerMinute: intFrom(env, 'RATE_LIMIT_PER_MINUTE', 60000, 1),
    trustProxy: trustProxyFrom(env.TRUST_PROXY),
    adminListener: adminListenerFrom(env, host, port),
    metricsToken: env.METRICS_TOKEN === '' ? undefined : env.METRICS_TOKEN,
    metricsProductLabels: env.METRICS_PRODUCT_LABELS === '1',
    runtimeSigningKey: runtimeSigningKeyFrom(env.RUNTIME_SIGNING_KEY),
    cookieSecure: env.COOKIE_SECURE === '1',
    tokenRate: tokenRateFrom(env),
    connections: {
      requestTimeoutMs,
      headersTimeoutMs,
      keepAliveTimeoutMs: intFrom(env, 'KEEPALIVE_TIMEOUT_MS', 5000, 1),
      max: intFrom(env, 'MAX_CONNECTIONS', 1024, 1),
    },
    runtime: {
      leaseSeconds,
      heartbeatSeconds: Math.max(10, Math.floor(leaseSeconds / 5)),
      // A copy beating as told makes about one call a minute: 600 leave room for consumes.
      machineRateLimitPerMinute: intFrom(env, 'RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE', 600, 0),
    },
    usage: {
      // At least 2 days: a lease is rolled within minutes of its end, and a day's hours are
      // recounted together, so a raw lease outlives any recount that could still need it.
      leaseRetentionDays: intFrom(env, 'USAGE_LEASE_RETENTION_DAYS', 90, 2),
      // The console draws at most 31 days by the hour; the API's longer hourly ranges are kept 90.
      hourlyRetentionDays: intFrom(env, 'USAGE_HOURLY_RETENTION_DAYS', 90, 2),
      rollupRetentionDays: intFrom(env, 'USAGE_RETENTION_DAYS', 730, 1),
    },
    webhooks: {
      allowHttp: env.WEBHOOK_ALLOW_HTTP === '1',
      allowPrivate: env.WEBHOOK_ALLOW_PRIVATE === '1',
      connectTimeoutMs: intFrom(env, 'WEBHOOK_CONNECT_TIMEOUT_MS', 5000, 1),
      timeoutMs: intFrom(env, 'WEBHOOK_TIMEOUT_MS', 15000, 1),
      pollMs: intFrom(env, 'WEBHOOK_POLL_MS', 1000, 1),
      concurrency: intFrom(env, 'WEBHOOK_CONCURRENCY', 8, 1),
      endpointConcurrency: intFrom(env, 'WEBHOOK_ENDPOINT_CONCURRENCY', 8, 1),
      worker: env.WEBHOOK_WORKER !== '0',
      // At least 4 days: longer than a delivery's 3 days of retries, so none is pruned mid-retry.
      retentionDays: intFrom(env, 'WEBHOOK_RETENTION_DAYS', 30, 4),
    },
    licenses: {
      expiringDays: intFrom(env, 'LICENSE_EXPIRING_DAYS', 30, 1),
      noticeDays: noticeDaysFrom(env.LICENSE_EXPIRING_NOTICE_DAYS),
    },
    backup: backupFrom(env),
    sso: ssoConfigFrom(env),
    limits: {
      ordersPerCall: intFrom(env, 'ORDER_BATCH_LIMIT', 200, 1),
      arrayElements: intFrom(env, 'ARRAY_LIMIT', 1000, 1),
      // The embedded database writes on the server's own thread, some ten times slower than a
      // PostgreSQL server: its default keeps the largest call to a second or two there.
      // The largest call a default accepts must fit TRANSACTION_LIMIT_MS with room to spare on a
      // loaded two-core machine: measured 2026-11-26, 40,000 rows took 0.8–2.9 s on PostgreSQL
      // (100,000 took 3.7–5.1 s and once ran past 5 s), 20,000 took 1.9–2.6 s embedded.
      instanceRowsPerCall: intFrom(env, 'INSTANCE_ROWS_LIMIT', databaseUrl === undefined ? 20000 : 40000, 1),
      bodyBytes: intFrom(env, 'BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024),
      transactionLimitMs: intFrom(env, 'TRANSACTION_LIMIT_MS', 5000, 1),
      keptPageMembers: intFrom(env, 'MEMBER_PAGE_CACHE_MEMBERS', 10_000, 0),
    },
  };
}
