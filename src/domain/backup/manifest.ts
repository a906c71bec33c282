import type { TableSum } from './backup.repository.js';
import { BackupFileError, jsonAt, listAt, objectAt, oneOfAt, SHA256_HEX, textAt, wholeAt } from './fields.js';

/** What a backup's database part is, and so how it is restored. */
export type DatabasePartKind = 'pglite-datadir' | 'pg-dump-custom';

/** One piece of the backup's body, in the order they follow the manifest. */
export interface PartEntry {
  /** `database`, or the name of the DATA_DIR file it holds (`runtime-keys.json`, `admin.key`). */
  name: string;
  bytes: number;
  sha256: string;
}

/** What a backup says of itself; restore reads it before it touches anything. */
export interface Manifest {
  format: 1;
  keywardVersion: string;
  database: 'embedded' | 'postgres';
  databaseFormat: DatabasePartKind;
  /** The migrations applied, in order; the last is the backup's migration level. */
  migrations: string[];
  /** ISO 8601: when the snapshot was taken. */
  createdAt: string;
  tables: TableSum[];
  parts: PartEntry[];
}

export const MANIFEST_FORMAT = 1;

/** A backup's database part is always named so. */
export const DATABASE_PART = 'database';

/** The DATA_DIR files a backup carries when they exist: the runtime's signing keys, the admin key. */
export const DATA_DIR_FILES = ['runtime-keys.json', 'admin.key'] as const;

/** Every part a backup may hold; a manifest naming any other is not Keyward's. */
const PART_NAMES = [DATABASE_PART, ...DATA_DIR_FILES] as const;

/** The migration level a list of applied migrations comes to: its last one by name. */
export function migrationLevel(migrations: readonly string[]): string {
  return [...migrations].sort().at(-1) ?? 'none';
}

/** A backup Keyward reads but refuses: another format, or a newer Keyward's. */
export class ManifestError extends Error {}

/**
 * Bounds far above any real manifest (a few dozen tables, a few hundred migrations), low enough
 * that a crafted one is refused before it costs anything.
 */
const MAX_LIST = 10_000;
const MAX_NAME = 200;

function tableSumAt(value: unknown, where: string): TableSum {
  const t = objectAt(value, where);
  return {
    table: textAt(t.table, `${where}.table`, MAX_NAME),
    rows: wholeAt(t.rows, `${where}.rows`, Number.MAX_SAFE_INTEGER),
    checksum: textAt(t.checksum, `${where}.checksum`, MAX_NAME),
  };
}

/**
 * The part entries, each a length no larger than the body that holds it (`bodyBytes`), a sha256,
 * and a name of Keyward's that no other entry has.
 */
function partsAt(value: unknown, bodyBytes: number): PartEntry[] {
  const parts = listAt(value, 'manifest.parts', PART_NAMES.length, (v, where) => {
    const p = objectAt(v, where);
    return {
      name: oneOfAt(p.name, `${where}.name`, PART_NAMES),
      bytes: wholeAt(p.bytes, `${where}.bytes`, bodyBytes),
      sha256: textAt(p.sha256, `${where}.sha256`, 64, SHA256_HEX),
    };
  });
  parts.forEach((part, i) => {
    const first = parts.findIndex((p) => p.name === part.name);
    if (first !== i) {
      throw new BackupFileError(
        `manifest.parts[${i}].name: ${part.name} is the name of manifest.parts[${first}] already`,
      );
    }
  });
  return parts;
}

/**
 * The manifest a backup's first body line holds, every field checked for its type and bounds;
 * `bodyBytes` is the body's whole length, which no part can exceed. Fields it does not know are
 * dropped, never carried along.
 */
export function parseManifest(text: string, bodyBytes: number): Manifest {
  const m = objectAt(jsonAt(text, 'manifest'), 'manifest');
  // The format first: another format's fields need not be these.
  const format = wholeAt(m.format, 'manifest.format', Number.MAX_SAFE_INTEGER);
  if (format !== MANIFEST_FORMAT) {
    const from = typeof m.keywardVersion === 'string' ? m.keywardVersion.slice(0, 40) : 'unknown';
    throw new ManifestError(
      `the backup's manifest is format ${format}, from Keyward ${from}; this Keyward reads format ${MANIFEST_FORMAT}`,
    );
  }
  const database = oneOfAt(m.database, 'manifest.database', ['embedded', 'postgres'] as const);
  const databaseFormat = oneOfAt(m.databaseFormat, 'manifest.databaseFormat', [
    database === 'embedded' ? 'pglite-datadir' : 'pg-dump-custom',
  ] as const);
  const createdAt = textAt(m.createdAt, 'manifest.createdAt', 40);
  if (Number.isNaN(Date.parse(createdAt)))
    throw new BackupFileError(`manifest.createdAt: ${createdAt} is no time`);
  return {
    format: MANIFEST_FORMAT,
    keywardVersion: textAt(m.keywardVersion, 'manifest.keywardVersion', 40, /^[0-9A-Za-z.+-]+$/),
    database,
    databaseFormat,
    migrations: listAt(m.migrations, 'manifest.migrations', MAX_LIST, (v, where) =>
      textAt(v, where, MAX_NAME),
    ),
    createdAt,
    tables: listAt(m.tables, 'manifest.tables', MAX_LIST, tableSumAt),
    parts: partsAt(m.parts, bodyBytes),
  };
}

/** `1.10.0` > `1.9.3`: versions compared number by number (a pre-release suffix is ignored). */
export function compareVersions(a: string, b: string): number {
  const parts = (v: string) =>
    v
      .split(/[-+]/)[0]
      ?.split('.')
      .map((n) => Number(n) || 0) ?? [];
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i += 1) {
    const d = (x[i] ?? 0) - (y[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

/**
 * Refuses a backup this Keyward cannot run on: one made by a newer version, or holding migrations
 * this version does not know (its schema is ahead). Both versions are named, so the operator knows
 * which Keyward to install before restoring.
 */
export function checkRestorable(
  manifest: Manifest,
  here: { version: string; migrations: readonly string[] },
): void {
  // A migration renumbered after it landed keeps its name after the number: still the same one.
  const topic = (name: string) => name.replace(/^[0-9]+_/, '');
  const known = new Set([...here.migrations, ...here.migrations.map(topic)]);
  const unknown = manifest.migrations.filter((name) => !known.has(name) && !known.has(topic(name)));
  const newer = compareVersions(manifest.keywardVersion, here.version) > 0;
  if (unknown.length === 0 && !newer) return;
  const theirs = `Keyward ${manifest.keywardVersion} (migration level ${migrationLevel(manifest.migrations)})`;
  const ours = `Keyward ${here.version} (migration level ${migrationLevel(here.migrations)})`;
  const why = unknown.length > 0 ? `; migrations unknown here: ${unknown.join(', ')}` : '';
  throw new ManifestError(
    `the backup is from ${theirs}, newer than this ${ours}${why}. Restore it with Keyward ${manifest.keywardVersion} or newer`,
  );
}

/** Tables whose count or checksum differ between two sets of sums, each named with both values. */
export function differences(expected: readonly TableSum[], actual: readonly TableSum[]): string[] {
  const found = new Map(actual.map((t) => [t.table, t]));
  const out: string[] = [];
  for (const want of expected) {
    const got = found.get(want.table);
    if (got === undefined) out.push(`${want.table}: missing`);
    else if (got.rows !== want.rows) out.push(`${want.table}: ${got.rows} rows, expected ${want.rows}`);
    else if (got.checksum !== want.checksum) out.push(`${want.table}: checksum differs`);
    found.delete(want.table);
  }
  for (const extra of found.keys()) out.push(`${extra}: not in the backup`);
  return out;
}
