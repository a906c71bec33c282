import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import { isEd25519PrivateJwk, type Ed25519PrivateJwk } from './ed25519.js';

/** A signing key as DATA_DIR/runtime-keys.json keeps it; the newest is the one that signs. */
export interface StoredRuntimeKey {
  kid: string;
  privateJwk: Ed25519PrivateJwk;
  /** ISO 8601. */
  createdAt: string;
}

/** What a change of the file is told by: a rename gives it a new inode, a rewrite a new mtime. */
export type FileVersion = string;

export class RuntimeKeyFileError extends Error {}

export function runtimeKeysFile(dataDir: string): string {
  return path.join(dataDir, 'runtime-keys.json');
}

function isStoredKey(value: unknown): value is StoredRuntimeKey {
  if (value === null || typeof value !== 'object') return false;
  const key = value as Record<string, unknown>;
  return (
    typeof key.kid === 'string' &&
    isEd25519PrivateJwk(key.privateJwk) &&
    typeof key.createdAt === 'string' &&
    !Number.isNaN(Date.parse(key.createdAt))
  );
}

/** The file's version, or undefined when there is no file. */
export async function keyFileVersion(file: string): Promise<FileVersion | undefined> {
  try {
    const stat = await fs.stat(file);
    return `${stat.ino}:${stat.mtimeMs}:${stat.size}`;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/** The keys in the file, oldest first; undefined when there is no file. A bad file is named, not shown. */
export async function readKeyFile(file: string): Promise<StoredRuntimeKey[] | undefined> {
  let content: string;
  try {
    content = await fs.readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(content);
  } catch {
    parsed = undefined;
  }
  const keys = (parsed as { keys?: unknown } | undefined)?.keys;
  if (!Array.isArray(keys) || !keys.every(isStoredKey)) {
    throw new RuntimeKeyFileError(
      `${file} is not a runtime key file ({"keys":[{kid, privateJwk, createdAt}]}): restore it from a backup, or move it away to have a new key generated`,
    );
  }
  return [...keys].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt));
}

/** Writes the keys to a new owner-only file beside `file`, synced, and returns its name. */
async function writeTemporary(file: string, keys: readonly StoredRuntimeKey[]): Promise<string> {
  await fs.mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const temporary = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  // 0600 from creation: the secret is never in a file others could open, not even for a moment.
  const handle = await fs.open(temporary, 'wx', 0o600);
  try {
    await handle.writeFile(`${JSON.stringify({ keys }, null, 2)}\n`, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return temporary;
}

/** The rename is durable only once the folder's entry is: best effort where folders cannot be opened. */
async function syncFolder(file: string): Promise<void> {
  try {
    const folder = await fs.open(path.dirname(file), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  } catch {
    // not every platform syncs a folder
  }
}

const NO_HARD_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS']);

/**
 * Creates the file with `keys` unless it exists: a hard link puts the whole file in place at once
 * and fails when another process (an instance sharing DATA_DIR) got there first, whose keys win.
 */
export async function createKeyFile(file: string, keys: readonly StoredRuntimeKey[]): Promise<boolean> {
  const temporary = await writeTemporary(file, keys);
  try {
    await fs.link(temporary, file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (!NO_HARD_LINKS.has(code ?? '')) throw error;
    // A file system without hard links: a rename, after a look, leaves a short race instead.
    if ((await keyFileVersion(file)) !== undefined) return false;
    await fs.rename(temporary, file);
  } finally {
    await fs.rm(temporary, { force: true });
  }
  await syncFolder(file);
  return true;
}

/** Replaces the file with `keys` at once: a reader sees the old file or the new one, never a part. */
export async function replaceKeyFile(file: string, keys: readonly StoredRuntimeKey[]): Promise<void> {
  const temporary = await writeTemporary(file, keys);
  try {
    await fs.rename(temporary, file);
  } catch (error) {
    await fs.rm(temporary, { force: true });
    throw error;
  }
  await syncFolder(file);
}
