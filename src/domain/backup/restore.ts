import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../../db/client.js';
import { acquireDataDirLock } from '../../db/data-dir-lock.js';
import { makeOwnerOnly } from '../../db/data-dir-modes.js';
import { MIGRATIONS } from '../../db/migrate.js';
import { VERSION } from '../../version.js';
import { BackupRepository } from './backup.repository.js';
import { openBackup, type OpenedBackup } from './backup-file.js';
import { checkRestorable, DATABASE_PART, DATA_DIR_FILES, differences, type Manifest } from './manifest.js';
import { pgRestore } from './pg-tools.js';
import { sumsNow } from './snapshot.js';

/** A restore or a verification refused, with the reason the operator reads. */
export class RestoreError extends Error {}

export interface RestoreTarget {
  dataDir: string;
  databaseUrl: string | undefined;
}

export interface RestoreReport {
  manifest: Manifest;
  /** Tables compared after the restore, all equal. */
  tables: number;
  rows: number;
  /** DATA_DIR files written beside the database. */
  files: string[];
}

/** Reads and checks the backup whole, and refuses one from a newer Keyward, before anything is written. */
async function openChecked(file: string, passphrase: string | undefined): Promise<OpenedBackup> {
  const opened = await openBackup(file, passphrase, os.tmpdir());
  try {
    checkRestorable(opened.manifest, { version: VERSION, migrations: Object.keys(MIGRATIONS) });
    const names = new Set<string>([DATABASE_PART, ...DATA_DIR_FILES]);
    const odd = [...opened.parts.keys()].filter((name) => !names.has(name));
    if (odd.length > 0 || !opened.parts.has(DATABASE_PART)) {
      throw new RestoreError(`the backup's parts are not Keyward's (${[...opened.parts.keys()].join(', ')})`);
    }
    return opened;
  } catch (error) {
    opened.dispose();
    throw error;
  }
}

/** Compares a restored database with the manifest's sums; any difference is named, table by table. */
async function compare(
  handle: DatabaseHandle,
  manifest: Manifest,
): Promise<{ tables: number; rows: number }> {
  const now = await sumsNow(handle.db);
  const diff = differences(manifest.tables, now.tables);
  if (diff.length > 0) {
    throw new RestoreError(
      `the restored data differs from the backup's manifest: ${diff.slice(0, 10).join('; ')}`,
    );
  }
  return { tables: now.tables.length, rows: now.tables.reduce((n, t) => n + t.rows, 0) };
}

function part(opened: OpenedBackup, name: string): string {
  const file = opened.parts.get(name);
  if (file === undefined) throw new RestoreError(`the backup has no ${name}`);
  return file;
}

/** What in DATA_DIR would be overwritten or mixed with the restore; the lock file of a dead process aside. */
function occupied(dataDir: string, embedded: boolean): string[] {
  if (!fs.existsSync(dataDir)) return [];
  const entries = fs.readdirSync(dataDir).filter((name) => name !== 'keyward.lock');
  return embedded ? entries : entries.filter((name) => (DATA_DIR_FILES as readonly string[]).includes(name));
}

function writeDataDirFiles(opened: OpenedBackup, dataDir: string): string[] {
  const written: string[] = [];
  for (const name of DATA_DIR_FILES) {
    const source = opened.parts.get(name);
    if (source === undefined) continue;
    fs.copyFileSync(source, path.join(dataDir, name), fs.constants.COPYFILE_EXCL);
    fs.chmodSync(path.join(dataDir, name), 0o600);
    written.push(name);
  }
  return written;
}

async function restoreEmbedded(opened: OpenedBackup, dataDir: string): Promise<RestoreReport> {
  // Taken first: a running server holds it, and then DATA_DIR is in use whatever it holds.
  const lock = acquireDataDirLock(dataDir);
  try {
    const there = occupied(dataDir, true);
    if (there.length > 0) {
      throw new RestoreError(
        `DATA_DIR ${dataDir} is not empty (${there.slice(0, 5).join(', ')}): restore only into an empty or new folder`,
      );
    }
  } finally {
    lock.release();
  }
  const handle = await openEmbedded({
    dataDir,
    loadDataDir: await fs.openAsBlob(part(opened, DATABASE_PART)),
  });
  let counted: { tables: number; rows: number };
  try {
    counted = await compare(handle, opened.manifest);
  } finally {
    await handle.close();
  }
  const files = writeDataDirFiles(opened, dataDir);
  makeOwnerOnly(dataDir);
  return { manifest: opened.manifest, ...counted, files };
}

async function restorePostgres(
  opened: OpenedBackup,
  target: RestoreTarget & { databaseUrl: string },
): Promise<RestoreReport> {
  const there = occupied(target.dataDir, false);
  if (there.length > 0) {
    throw new RestoreError(
      `DATA_DIR ${target.dataDir} holds ${there.join(' and ')} already: move them away first`,
    );
  }
  const handle = await openPostgres(target.databaseUrl);
  try {
    const objects = await new BackupRepository(handle.db).userObjects();
    if (objects > 0) {
      throw new RestoreError(
        `the database of DATABASE_URL is not empty (${objects} tables, sequences or other objects): restore only into a new, empty database (createdb)`,
      );
    }
    await pgRestore(target.databaseUrl, part(opened, DATABASE_PART));
    const counted = await compare(handle, opened.manifest);
    fs.mkdirSync(target.dataDir, { recursive: true, mode: 0o700 });
    return { manifest: opened.manifest, ...counted, files: writeDataDirFiles(opened, target.dataDir) };
  } finally {
    await handle.close();
  }
}

/**
 * `keyward restore`: the backup checked whole first, then restored only into an empty DATA_DIR
 * (the embedded database) or an empty database (DATABASE_URL), and compared with its manifest.
 */
export async function restoreBackup(
  file: string,
  passphrase: string | undefined,
  target: RestoreTarget,
): Promise<RestoreReport> {
  const opened = await openChecked(file, passphrase);
  try {
    const { database } = opened.manifest;
    if (database === 'embedded') {
      if (target.databaseUrl !== undefined) {
        throw new RestoreError(
          'this backup is of the embedded database: unset DATABASE_URL to restore it into DATA_DIR',
        );
      }
      return await restoreEmbedded(opened, target.dataDir);
    }
    if (target.databaseUrl === undefined) {
      throw new RestoreError(
        'this backup is of PostgreSQL: set DATABASE_URL to the new, empty database to restore it into',
      );
    }
    return await restorePostgres(opened, { ...target, databaseUrl: target.databaseUrl });
  } finally {
    opened.dispose();
  }
}

/**
 * `keyward backup --verify`: restores into a scratch place (an embedded database in memory, or a
 * new database beside DATABASE_URL's, dropped after) and compares counts and checksums.
 */
export async function verifyBackup(
  file: string,
  passphrase: string | undefined,
  databaseUrl: string | undefined,
): Promise<Omit<RestoreReport, 'files'>> {
  const opened = await openChecked(file, passphrase);
  try {
    if (opened.manifest.database === 'embedded') {
      const handle = await openEmbedded({ loadDataDir: await fs.openAsBlob(part(opened, DATABASE_PART)) });
      try {
        return { manifest: opened.manifest, ...(await compare(handle, opened.manifest)) };
      } finally {
        await handle.close();
      }
    }
    if (databaseUrl === undefined) {
      throw new RestoreError(
        'verifying a PostgreSQL backup restores it into a scratch database: set DATABASE_URL to a server where it may create one',
      );
    }
    return { manifest: opened.manifest, ...(await verifyOnPostgres(opened, databaseUrl)) };
  } finally {
    opened.dispose();
  }
}

async function verifyOnPostgres(
  opened: OpenedBackup,
  databaseUrl: string,
): Promise<{ tables: number; rows: number }> {
  const scratch = `keyward_verify_${process.pid}_${Date.now()}`;
  const server = await openPostgres(databaseUrl);
  try {
    await new BackupRepository(server.db).createDatabase(scratch);
    try {
      const url = new URL(databaseUrl);
      url.pathname = `/${scratch}`;
      await pgRestore(url.toString(), part(opened, DATABASE_PART));
      const handle = await openPostgres(url.toString());
      try {
        return await compare(handle, opened.manifest);
      } finally {
        await handle.close();
      }
    } finally {
      await new BackupRepository(server.db).dropDatabase(scratch);
    }
  } finally {
    await server.close();
  }
}
