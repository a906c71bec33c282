import fs from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** The name a backup has while it is written: hidden, and never the final name. */
export function partialName(file: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.partial`);
}

/**
 * Writes `bytes` to `file`, mode 0600, by way of a partial file renamed once whole and synced: a
 * process killed mid-way leaves no file under the final name, only the partial one. `check` runs
 * on the partial file before the rename (the CLI checks what the server streamed is whole).
 */
export async function writeWhole(
  file: string,
  bytes: AsyncIterable<Buffer> | NodeJS.ReadableStream,
  check: (partial: string) => Promise<void> = async () => undefined,
): Promise<void> {
  if (fs.existsSync(file)) throw new Error(`${file} exists already; choose another name`);
  const partial = partialName(file);
  try {
    const out = fs.createWriteStream(partial, { flags: 'wx', mode: 0o600 });
    await pipeline(bytes instanceof Readable ? bytes : Readable.from(bytes as AsyncIterable<Buffer>), out);
    fs.chmodSync(partial, 0o600);
    const fd = fs.openSync(partial, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    await check(partial);
    fs.renameSync(partial, file);
    syncDirectory(path.dirname(file));
  } catch (error) {
    fs.rmSync(partial, { force: true });
    throw error;
  }
}

/** The rename itself survives a crash once the folder is synced. */
function syncDirectory(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // Some file systems do not sync folders; the file itself is synced.
  }
}

/** keyward-backup-20250131T120000Z.kwbackup: sorts by time, says what it is. */
export function backupFileName(now: Date): string {
  return `keyward-backup-${now.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '')}.kwbackup`;
}

const NAMED = /^keyward-backup-(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z\.kwbackup$/;

/** The backups in `dir` named by backupFileName, oldest first, with the time each name says. */
export function backupsIn(dir: string): Array<{ file: string; takenAt: number }> {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .flatMap((name) => {
      const m = NAMED.exec(name);
      if (m === null) return [];
      const takenAt = Date.parse(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
      return [{ file: path.join(dir, name), takenAt }];
    })
    .sort((a, b) => a.takenAt - b.takenAt);
}
