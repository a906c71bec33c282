import fs from 'node:fs';
import path from 'node:path';

/** Files this process creates are its owner's alone: DATA_DIR holds password hashes and keys. */
export const OWNER_ONLY_UMASK = 0o077;

export interface ModeRepair {
  /** Folders and files that other users could read, write or enter, now owner-only. */
  repaired: number;
  /** Ones whose mode could not be changed (owned by another user). */
  failed: number;
}

/**
 * Takes group and other permissions off every folder and file under `dir` (folders 0700, files
 * 0600 when their owner could read and write them). Symbolic links are not followed: their own
 * mode means nothing, and their target may lie outside. Walks with its own stack.
 */
export function makeOwnerOnly(dir: string): ModeRepair {
  const outcome: ModeRepair = { repaired: 0, failed: 0 };
  const pending = [dir];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(next);
    } catch {
      continue; // removed while we walked (a WAL segment recycled…)
    }
    if (stat.isSymbolicLink()) continue;
    const mode = stat.mode & 0o777;
    const wanted = stat.isDirectory() ? 0o700 : mode & 0o700;
    if (mode !== wanted) {
      try {
        fs.chmodSync(next, wanted);
        outcome.repaired += 1;
      } catch {
        outcome.failed += 1;
      }
    }
    if (stat.isDirectory()) {
      for (const entry of fs.readdirSync(next)) pending.push(path.join(next, entry));
    }
  }
  return outcome;
}

/**
 * At start, before anything opens it: new files owner-only (umask), and a DATA_DIR left readable
 * by others (an older version, a copy, a restore) made owner-only, saying so once. The warning
 * names the folder and counts; it shows no content.
 */
export function secureDataDir(dataDir: string, warn: (message: string) => void): void {
  process.umask(OWNER_ONLY_UMASK);
  if (!fs.existsSync(dataDir)) return;
  const { repaired, failed } = makeOwnerOnly(dataDir);
  if (repaired > 0) {
    warn(
      `DATA_DIR ${dataDir}: ${repaired} folders and files were open to other users; ` +
        'made them owner-only (folders 0700, files 0600)',
    );
  }
  if (failed > 0) {
    warn(`DATA_DIR ${dataDir}: could not make ${failed} folders and files owner-only; fix their owner`);
  }
}
