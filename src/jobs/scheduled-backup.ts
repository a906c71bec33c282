import fs from 'node:fs';
import type { FastifyBaseLogger } from 'fastify';
import type { BackupConfig } from '../config.js';
import { isEmbedded, type Db } from '../db/client.js';
import { BackupRepository } from '../domain/backup/backup.repository.js';
import { DATABASE_HOLDER, type BackupService } from '../domain/backup/backup.service.js';
import { backupFileName, backupsIn, writeWhole } from '../domain/backup/write-file.js';

/** A held session lock: the instance holding it takes the scheduled backups. */
interface Held {
  alive(): Promise<void>;
  release(): void;
}

/**
 * Takes the scheduled backups' lock on a connection of its own and keeps that connection (and so
 * the lock) until released; undefined when another instance holds it. A session lock rather than
 * a row: it needs no migration, and it is freed by PostgreSQL itself when its holder dies.
 */
function tryHold(db: Db): Promise<Held | undefined> {
  return new Promise((resolve, reject) => {
    db.connection()
      .execute(async (connection) => {
        const repository = new BackupRepository(connection);
        if (!(await repository.tryScheduleLock())) return resolve(undefined);
        let release!: () => void;
        const released = new Promise<void>((done) => (release = done));
        resolve({ alive: () => repository.alive(), release });
        await released;
        await repository.releaseScheduleLock().catch(() => undefined);
      })
      .catch(reject);
  });
}

/** Whether this instance is the one that takes scheduled backups now. */
class Leadership {
  private held: Held | undefined;

  constructor(private readonly db: Db) {}

  async lead(): Promise<boolean> {
    // The embedded database has one server: it always leads.
    if (isEmbedded(this.db)) return true;
    if (this.held !== undefined) {
      try {
        await this.held.alive();
        return true;
      } catch {
        // Its session is gone, and the lock with it: another instance may hold it now.
        this.stop();
      }
    }
    this.held = await tryHold(this.db);
    return this.held !== undefined;
  }

  stop(): void {
    this.held?.release();
    this.held = undefined;
  }
}

/** How often an instance looks whether a backup is due: often enough to keep to BACKUP_EVERY. */
const tickOf = (everyMs: number) => Math.max(1000, Math.min(60_000, Math.floor(everyMs / 4)));

/**
 * Scheduled backups (BACKUP_DIR, BACKUP_EVERY, BACKUP_KEEP): when the newest backup in BACKUP_DIR
 * is BACKUP_EVERY old (or there is none), the leading instance takes one, then deletes all but the
 * newest BACKUP_KEEP. On PostgreSQL only the instance holding the advisory lock takes them, so
 * instances sharing one database (and one BACKUP_DIR) take one per period between them.
 */
export function startScheduledBackups(
  backup: BackupService,
  db: Db,
  settings: BackupConfig,
  log: FastifyBaseLogger,
): () => void {
  const { dir, everyMs } = settings;
  if (dir === undefined || everyMs === undefined) return () => undefined;
  const leadership = new Leadership(db);
  let running = false;
  let stopped = false;
  const run = async () => {
    if (running || stopped) return;
    running = true;
    try {
      if (!(await leadership.lead())) return;
      const newest = backupsIn(dir).at(-1);
      if (newest !== undefined && Date.now() - newest.takenAt < everyMs) return;
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
      const file = `${dir}/${backupFileName(new Date())}`;
      // Encrypted unless BACKUP_ENCRYPT=0 (loadConfig refuses BACKUP_DIR with neither that nor a passphrase).
      const taken = await backup.take({
        includeAdminKey: false,
        passphrase: settings.passphrase,
        encrypt: settings.encrypt,
        roles: DATABASE_HOLDER,
      });
      await writeWhole(file, taken.bytes);
      log.info({ file, bytes: fs.statSync(file).size }, 'scheduled backup written');
      for (const old of backupsIn(dir).slice(0, -settings.keep)) {
        fs.rmSync(old.file, { force: true });
        log.info({ file: old.file }, 'old scheduled backup deleted (BACKUP_KEEP)');
      }
    } catch (error) {
      log.warn({ err: error }, 'scheduled backup failed; will retry');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void run(), tickOf(everyMs));
  timer.unref();
  void run();
  return () => {
    stopped = true;
    clearInterval(timer);
    leadership.stop();
  };
}
