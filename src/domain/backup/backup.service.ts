import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client.js';
import { mayAct, PERMISSIONS, type OperatorRole } from '../operators/roles.js';
import { VERSION } from '../../version.js';
import { backupBytes, partEntries, type PartSource } from './backup-file.js';
import { DATA_DIR_FILES, MANIFEST_FORMAT, type Manifest } from './manifest.js';
import { takeSnapshot } from './snapshot.js';

/** What a backup holds beside the database, how it is sealed, and who asks for it. */
export interface BackupOptions {
  /** DATA_DIR/admin.key too: off unless asked, since whoever holds it runs the admin API. */
  includeAdminKey: boolean;
  /** Encrypts the file with this passphrase. */
  passphrase: string | undefined;
  /**
   * False only when the caller asked for a file anyone who holds it can read and alter (its
   * checksum proves no origin): a backup is encrypted otherwise, and needs a passphrase.
   */
  encrypt: boolean;
  /**
   * The calling credential's roles (a personal token's and its operator's): the signing keys go in
   * only for one that may hold them (`keys`), the admin key only for one holding every permission.
   */
  roles: readonly OperatorRole[];
}

/**
 * The roles of a caller that holds the database itself (DATABASE_URL on the command line, the
 * server's own scheduled backups): it can read everything a backup holds anyway.
 */
export const DATABASE_HOLDER: readonly OperatorRole[] = ['owner'];

/** A backup asked for in a way that cannot be taken: no passphrase and no explicit `encrypt: false`. */
export class BackupInputError extends Error {}

/** A backup asking for what the calling credential may not carry away. */
export class BackupNotAllowedError extends Error {}

/** A backup taken: its manifest, and the file's bytes, to be written or streamed once. */
export interface TakenBackup {
  manifest: Manifest;
  bytes: AsyncGenerator<Buffer>;
}

/** The guards a backup is asked through, before any snapshot is taken. */
function checkAsked(options: BackupOptions): void {
  if (options.passphrase !== undefined && !options.encrypt) {
    throw new BackupInputError(
      'passphrase: given for a backup asked to be unencrypted; give one or the other',
    );
  }
  if (options.passphrase === undefined && options.encrypt) {
    throw new BackupInputError(
      'passphrase: a backup is encrypted unless asked otherwise; give a passphrase, or ask for an unencrypted one explicitly',
    );
  }
  if (options.includeAdminKey && !PERMISSIONS.every((p) => mayAct(options.roles, p))) {
    throw new BackupNotAllowedError(
      `includeAdminKey: the admin key holds every permission, and role ${[...new Set(options.roles)].join(' and ')} does not`,
    );
  }
}

export class BackupService {
  /**
   * `db` without the time limit of requests: a backup holds its connection (on the embedded
   * database, the whole database) for as long as the copy takes.
   */
  constructor(
    private readonly db: Db,
    private readonly settings: { databaseUrl: string | undefined; dataDir: string },
  ) {}

  private dataDirParts(options: BackupOptions): PartSource[] {
    const names = DATA_DIR_FILES.filter((name) =>
      name === 'admin.key' ? options.includeAdminKey : mayAct(options.roles, 'keys'),
    );
    const parts: PartSource[] = [];
    for (const name of names) {
      const file = path.join(this.settings.dataDir, name);
      if (fs.existsSync(file)) parts.push({ name, bytes: fs.readFileSync(file) });
    }
    return parts;
  }

  /**
   * Takes the snapshot now (before this returns), then gives the file's bytes. A scratch copy
   * (pg_dump's file) is removed once the bytes have all been read, or the reading stopped.
   */
  async take(options: BackupOptions): Promise<TakenBackup> {
    checkAsked(options);
    const snapshot = await takeSnapshot(this.db, this.settings.databaseUrl);
    try {
      const sources = [snapshot.part, ...this.dataDirParts(options)];
      const manifest: Manifest = {
        format: MANIFEST_FORMAT,
        keywardVersion: VERSION,
        database: snapshot.database,
        databaseFormat: snapshot.databaseFormat,
        migrations: snapshot.migrations,
        createdAt: snapshot.createdAt,
        tables: snapshot.tables,
        parts: await partEntries(sources),
      };
      async function* bytes(): AsyncGenerator<Buffer> {
        try {
          yield* backupBytes(manifest, sources, options.passphrase);
        } finally {
          snapshot.dispose();
        }
      }
      return { manifest, bytes: bytes() };
    } catch (error) {
      snapshot.dispose();
      throw error;
    }
  }
}
