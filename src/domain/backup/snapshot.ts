import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { embeddedDumper, type Db } from '../../db/client.js';
import { BackupRepository, type TableSum } from './backup.repository.js';
import type { DatabasePartKind } from './manifest.js';
import type { PartSource } from './backup-file.js';
import { pgDump } from './pg-tools.js';

/** The database as of one instant: its rows' sums, its migrations and its copy, taken together. */
export interface Snapshot {
  database: 'embedded' | 'postgres';
  databaseFormat: DatabasePartKind;
  migrations: string[];
  tables: TableSum[];
  createdAt: string;
  part: PartSource;
  /** Removes the copy's scratch file, if it has one. */
  dispose(): void;
}

/** The sums of every table and the migrations applied, read by `repository` in its transaction. */
async function sumsOf(repository: BackupRepository): Promise<{ migrations: string[]; tables: TableSum[] }> {
  await repository.fixTextForms();
  const tables: TableSum[] = [];
  for (const table of await repository.tables()) tables.push(await repository.sum(table));
  return { migrations: await repository.appliedMigrations(), tables };
}

/** Sums of a database as it stands, in one transaction (a restored copy, to compare). */
export async function sumsNow(db: Db): Promise<{ migrations: string[]; tables: TableSum[] }> {
  return db.transaction().execute((trx) => sumsOf(new BackupRepository(trx)));
}

/**
 * The embedded database, copied while this holds its one connection: no statement runs between
 * the checkpoint, the sums and the copy, so the copy holds every transaction committed before and
 * none after. Requests wait meanwhile (some seconds for a large database).
 */
async function embeddedSnapshot(db: Db, dump: () => Promise<Blob>): Promise<Snapshot> {
  return db.connection().execute(async (connection) => {
    await new BackupRepository(connection).checkpoint();
    const createdAt = new Date().toISOString();
    const sums = await sumsNow(connection);
    const copy = Buffer.from(await (await dump()).arrayBuffer());
    return {
      database: 'embedded',
      databaseFormat: 'pglite-datadir',
      ...sums,
      createdAt,
      part: { name: 'database', bytes: copy },
      dispose: () => undefined,
    };
  });
}

/**
 * PostgreSQL in one repeatable-read transaction whose snapshot pg_dump shares (--snapshot): the
 * dump and the sums see the same committed rows, while writes go on.
 */
async function postgresSnapshot(db: Db, databaseUrl: string): Promise<Snapshot> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-backup-'));
  const file = path.join(dir, 'database.pgdump');
  const dispose = () => fs.rmSync(dir, { recursive: true, force: true });
  try {
    return await db
      .transaction()
      .setIsolationLevel('repeatable read')
      .setAccessMode('read only')
      .execute(async (trx) => {
        const repository = new BackupRepository(trx);
        const snapshot = await repository.exportSnapshot();
        const createdAt = new Date().toISOString();
        // pg_dump reads on its own connection while the sums are read on this one.
        const [sums] = await Promise.all([sumsOf(repository), pgDump(databaseUrl, snapshot, file)]);
        return {
          database: 'postgres',
          databaseFormat: 'pg-dump-custom',
          ...sums,
          createdAt,
          part: { name: 'database', bytes: { file } },
          dispose,
        } satisfies Snapshot;
      });
  } catch (error) {
    dispose();
    throw error;
  }
}

/** A consistent snapshot of `db`: the embedded database's copy, or pg_dump of `databaseUrl`. */
export async function takeSnapshot(db: Db, databaseUrl: string | undefined): Promise<Snapshot> {
  const dump = embeddedDumper(db);
  if (dump !== undefined) return embeddedSnapshot(db, dump);
  if (databaseUrl === undefined) throw new Error('no DATABASE_URL for pg_dump');
  return postgresSnapshot(db, databaseUrl);
}
