import { sql, type Migration, type Transaction } from 'kysely';
import type { Db } from './client.js';
import type { Database } from './schema.js';

export type MigrationList = Readonly<Record<string, Migration>>;

// The runner keeps the table of Kysely's Migrator, in its format: every Keyward before this runner
// used that Migrator, so an older version still reads what this one writes (and refuses it when
// it is newer). Plain SQL, as the table is no part of the application's schema types.

/**
 * Kysely's PostgresAdapter takes a session advisory lock under this key. The same key here means
 * this runner, Kysely's Migrator (migrateTo, tests) and an older Keyward exclude one another.
 */
const MIGRATION_LOCK_KEY = 3853314791062309107n;

/**
 * Migrations that landed on main under one name and were later renumbered, old name → new. A
 * database migrated in between has the migration under its old name: it is the same migration.
 */
const RENUMBERED: Readonly<Record<string, string>> = {
  '0151_order_batches_request_id': '0152_order_batches_request_id',
};

/** The database was migrated by a Keyward that knows migrations this one does not. */
export class NewerDatabaseError extends Error {
  constructor(
    readonly databaseLevel: string,
    readonly knownLevel: string,
    readonly unknown: string[],
  ) {
    // The level alone would hide an unknown migration numbered below it (they may land unordered).
    const others = unknown.filter((name) => name !== databaseLevel);
    const withOthers = others.length === 0 ? '' : ` (with ${others.join(', ')})`;
    super(
      `this database was migrated by a newer Keyward: its level is ${databaseLevel}${withOthers}, ` +
        `this Keyward knows up to ${knownLevel}; start the newer version or restore a backup`,
    );
    this.name = 'NewerDatabaseError';
  }
}

const levelOf = (names: Iterable<string>): string => [...names].sort().at(-1) ?? '(none)';

async function appliedNames(db: Db): Promise<string[]> {
  const { rows: table } = await sql<{ found: boolean }>`
    select to_regclass('kysely_migration') is not null as found`.execute(db);
  if (table[0]?.found !== true) return [];
  const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(db);
  return rows.map((row) => RENUMBERED[row.name] ?? row.name);
}

function refuseNewer(applied: string[], migrations: MigrationList): void {
  const unknown = applied.filter((name) => migrations[name] === undefined).sort();
  if (unknown.length > 0) {
    throw new NewerDatabaseError(levelOf(applied), levelOf(Object.keys(migrations)), unknown);
  }
}

/** Records a renumbered migration under its current name, once. */
async function renameRenumbered(trx: Transaction<Database>): Promise<void> {
  for (const [old, current] of Object.entries(RENUMBERED)) {
    await sql`update kysely_migration set name = ${current} where name = ${old}
      and not exists (select 1 from kysely_migration where name = ${current})`.execute(trx);
  }
}

/**
 * Applies every migration of `migrations` the database lacks, in name order, and returns their
 * names. All of it is one transaction, so a migration that fails leaves the database exactly as
 * it was, the migrations of this run before it included (PostgreSQL's DDL is transactional, and
 * the embedded database is PostgreSQL). The first statement after the transaction's settings is
 * an advisory lock held until commit: instances starting together on one PostgreSQL wait for one
 * another, and the one that waited finds nothing left to do.
 */
export async function runMigrations(db: Db, migrations: MigrationList): Promise<string[]> {
  return db.transaction().execute(async (trx) => {
    // The pool's statement limit is for requests: a migration over a large table may take longer,
    // and so may another instance's run, which this one waits for. The lock still gives up.
    await sql`set local statement_timeout = 0`.execute(trx);
    await sql`set local lock_timeout = '1h'`.execute(trx);
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_KEY)})`.execute(trx);
    await sql`create table if not exists kysely_migration (
      name varchar(255) not null primary key, timestamp varchar(255) not null)`.execute(trx);
    await renameRenumbered(trx);
    const applied = await appliedNames(trx);
    refuseNewer(applied, migrations);
    const done = new Set(applied);
    const pending = Object.keys(migrations)
      .sort()
      .filter((name) => !done.has(name));
    for (const name of pending) {
      await (migrations[name] as Migration).up(trx);
      await sql`insert into kysely_migration (name, timestamp)
        values (${name}, ${new Date().toISOString()})`.execute(trx);
    }
    return pending;
  });
}

/**
 * Which of `migrations` the database has, and which it lacks. Reads only: it takes no lock and
 * creates nothing, and does not refuse a newer database (a running older instance may be asked
 * while a newer one has migrated under it).
 */
export async function readMigrationStatus(
  db: Db,
  migrations: MigrationList,
): Promise<{ applied: string[]; pending: string[] }> {
  const applied = await appliedNames(db);
  const done = new Set(applied);
  const known = Object.keys(migrations).sort();
  return { applied: known.filter((n) => done.has(n)), pending: known.filter((n) => !done.has(n)) };
}
