import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../../db/client.js';
import { VERSION } from '../../version.js';
import { backupBytes, partEntries, type PartSource } from './backup-file.js';
import { MANIFEST_FORMAT, type Manifest } from './manifest.js';
import { takeSnapshot } from './snapshot.js';

/** What a backup holds beside the database, and whether it is sealed. */
export interface BackupOptions {
  /** DATA_DIR/admin.key too: off unless asked, since whoever holds it runs the admin API. */
  includeAdminKey: boolean;
  /** Encrypts the file with this passphrase. */
  passphrase: string | undefined;
}

/** A backup taken: its manifest, and the file's bytes, to be written or streamed once. */
export interface TakenBackup {
  manifest: Manifest;
  bytes: AsyncGenerator<Buffer>;
}

/** The DATA_DIR files a backup carries when they exist: the runtime's signing keys, the admin key. */
export const DATA_DIR_FILES = ['runtime-keys.json', 'admin.key'] as const;

/** A backup's database part is always named so. */
export const DATABASE_PART = 'database';

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
    const names = DATA_DIR_FILES.filter((name) => name !== 'admin.key' || options.includeAdminKey);
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
