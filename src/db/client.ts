import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { acquireDataDirLock, type DataDirLock } from './data-dir-lock.js';
import { INT8_OID, parseInt8 } from './int8.js';
import { PgliteDialect } from './pglite-dialect.js';
import { POSTGRES_DEFAULTS, type PostgresOptions } from './postgres-options.js';
import { postgresConnections } from './postgres-pool.js';
import type { Database } from './schema.js';
import { ShareableDialect } from './time-limit.js';

export type Db = Kysely<Database>;

const execFileAsync = promisify(execFile);

/** Handles opened on the embedded database: a single session inside this process. */
const embedded = new WeakSet<Db>();

/** Whether `db` is the embedded database, where every statement is planned anew and runs in turn. */
export function isEmbedded(db: Db): boolean {
  return embedded.has(db);
}

/**
 * The embedded database's own copy of its data directory (PGlite's dumpDataDir, gzip tar), by
 * handle: a backup takes it while it holds the handle's one connection.
 */
const dumpers = new WeakMap<Db, () => Promise<Blob>>();

/** How to copy the embedded database's data directory; undefined on PostgreSQL. */
export function embeddedDumper(db: Db): (() => Promise<Blob>) | undefined {
  return dumpers.get(db);
}

/** The dialect of every handle's Kysely, so that views of it can share its connections. */
const dialects = new WeakMap<Db, ShareableDialect>();

/** How each handle (and its views) tells whether its database answers: see databaseReadiness. */
const readinessOf = new WeakMap<Db, Readiness>();

function kyselyOver(dialect: ShareableDialect): Db {
  const db = new Kysely<Database>({ dialect });
  dialects.set(db, dialect);
  return db;
}

/**
 * `db` over the same connections, with a time limit on each one taken: a transaction (or a lone
 * statement) that has held its connection `limitMs` or longer fails at its next statement and
 * rolls back. Every service works through such a view (TRANSACTION_LIMIT_MS): requests, async
 * batches, and housekeeping's lone deletes; migrations use the handle's own instance.
 */
export function withTimeLimit(db: Db, limitMs: number): Db {
  const dialect = dialects.get(db);
  if (dialect === undefined) throw new Error("not a database handle: time limits apply to a handle's own db");
  const limited = new Kysely<Database>({ dialect: dialect.limitedTo(limitMs) });
  if (embedded.has(db)) embedded.add(limited);
  const dump = dumpers.get(db);
  if (dump !== undefined) dumpers.set(limited, dump);
  const readiness = readinessOf.get(db);
  if (readiness !== undefined) readinessOf.set(limited, readiness);
  return limited;
}

/** Whether the database answers, asked apart from the connections requests wait for (/readyz). */
export interface Readiness {
  answers(): Promise<boolean>;
  /** Why it last did not, for the log. */
  readonly lastFailure: unknown;
}

export interface DatabaseHandle {
  db: Db;
  kind: 'embedded' | 'postgres';
  close(): Promise<void>;
}

/**
 * Whether `db`'s database answers now: on PostgreSQL a `select 1` on a connection of its own,
 * never queued behind the request pool, given up after the silence bound (DATABASE_SILENCE_MS).
 */
export function databaseReadiness(db: Db): Readiness {
  return (
    readinessOf.get(db) ?? {
      answers: () =>
        ping(db).then(
          () => true,
          () => false,
        ),
      lastFailure: 'select 1 failed',
    }
  );
}

export async function openPostgres(
  url: string,
  options: PostgresOptions = POSTGRES_DEFAULTS,
): Promise<DatabaseHandle> {
  const { pool, watchdog } = postgresConnections(url, options);
  const dialect = new ShareableDialect(new PostgresDialect({ pool }));
  const db = kyselyOver(dialect);
  readinessOf.set(db, watchdog);
  return {
    db,
    kind: 'postgres',
    async close() {
      await db.destroy();
      await dialect.destroy();
      await watchdog.close();
    },
  };
}

/**
 * The embedded database's memory is the server's memory, and WebAssembly memory never shrinks:
 * a smaller buffer cache than PostgreSQL's default 128 MB keeps a long-running server's RSS down
 * (the files are still cached by the operating system underneath).
 */
const EMBEDDED_SETTINGS = ['shared_buffers = 32MB', 'work_mem = 4MB', 'maintenance_work_mem = 16MB'];

/**
 * initdb grows the WebAssembly memory to some 800 MB, and an instance keeps its memory for good:
 * a new cluster is created by a short-lived process, so the server's own instance starts small.
 */
async function initEmbeddedCluster(pgDataDir: string): Promise<void> {
  const script = `const { PGlite } = await import('@electric-sql/pglite');
    const pg = await PGlite.create({ dataDir: process.argv[1] });
    await pg.close();`;
  await execFileAsync(process.execPath, ['--input-type=module', '-e', script, pgDataDir], {
    cwd: path.dirname(fileURLToPath(import.meta.url)),
  });
}

export interface EmbeddedOptions {
  /** Where the cluster lives; undefined keeps it in memory (tests). */
  dataDir?: string;
  /** A migrated snapshot from dumpDataDir, to skip initdb in tests. */
  loadDataDir?: Blob;
}

/** Where in DATA_DIR the embedded database keeps its cluster. */
export function embeddedClusterDir(dataDir: string): string {
  return `${dataDir}/pgdata`;
}

export async function openEmbedded(options: EmbeddedOptions): Promise<DatabaseHandle> {
  let lock: DataDirLock | undefined;
  if (options.dataDir !== undefined) lock = acquireDataDirLock(options.dataDir);
  try {
    const pgDataDir = options.dataDir === undefined ? undefined : embeddedClusterDir(options.dataDir);
    // Loaded only here: the embedded database's code costs a server on PostgreSQL some 40 MB.
    const { PGlite } = await import('@electric-sql/pglite');
    const create = () =>
      PGlite.create({
        ...(pgDataDir === undefined ? {} : { dataDir: pgDataDir }),
        ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
        parsers: { [INT8_OID]: parseInt8 },
        postgresqlconf: EMBEDDED_SETTINGS,
      });
    // A snapshot to load is a whole cluster already (a restore): nothing to initialise.
    if (
      pgDataDir !== undefined &&
      options.loadDataDir === undefined &&
      !fs.existsSync(`${pgDataDir}/PG_VERSION`)
    )
      await initEmbeddedCluster(pgDataDir);
    const pglite = await create();
    const db = kyselyOver(new ShareableDialect(new PgliteDialect(pglite)));
    embedded.add(db);
    dumpers.set(db, () => pglite.dumpDataDir('gzip'));
    // The embedded database lives in this process: it answers while it is open. A ping would only
    // measure the queue in front of its one connection (a backup holds it for seconds), which is
    // the busyness readiness must not report (docs/operations.md, /readyz).
    readinessOf.set(db, {
      answers: async () => !pglite.closed,
      lastFailure: 'the embedded database is closed',
    });
    return {
      db,
      kind: 'embedded',
      async close() {
        await db.destroy();
        await pglite.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}
