import type { TableSum } from './backup.repository.js';

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

/** The migration level a list of applied migrations comes to: its last one by name. */
export function migrationLevel(migrations: readonly string[]): string {
  return [...migrations].sort().at(-1) ?? 'none';
}

export class ManifestError extends Error {}

function isTableSum(value: unknown): value is TableSum {
  const t = value as Partial<TableSum> | null;
  return (
    typeof t === 'object' &&
    t !== null &&
    typeof t.table === 'string' &&
    typeof t.rows === 'number' &&
    typeof t.checksum === 'string'
  );
}

function isPart(value: unknown): value is PartEntry {
  const p = value as Partial<PartEntry> | null;
  return (
    typeof p === 'object' &&
    p !== null &&
    typeof p.name === 'string' &&
    typeof p.bytes === 'number' &&
    typeof p.sha256 === 'string'
  );
}

/** The manifest a backup's first body line holds, checked field by field. */
export function parseManifest(text: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ManifestError('the backup has no readable manifest: not a Keyward backup, or damaged');
  }
  const m = value as Partial<Manifest> | null;
  const valid =
    typeof m === 'object' &&
    m !== null &&
    typeof m.format === 'number' &&
    typeof m.keywardVersion === 'string' &&
    (m.database === 'embedded' || m.database === 'postgres') &&
    (m.databaseFormat === 'pglite-datadir' || m.databaseFormat === 'pg-dump-custom') &&
    Array.isArray(m.migrations) &&
    m.migrations.every((n) => typeof n === 'string') &&
    typeof m.createdAt === 'string' &&
    Array.isArray(m.tables) &&
    m.tables.every(isTableSum) &&
    Array.isArray(m.parts) &&
    m.parts.every(isPart);
  if (!valid)
    throw new ManifestError('the backup’s manifest is incomplete: not a Keyward backup, or damaged');
  if (m.format !== MANIFEST_FORMAT) {
    throw new ManifestError(
      `the backup's manifest is format ${m.format}, from Keyward ${m.keywardVersion}; this Keyward reads format ${MANIFEST_FORMAT}`,
    );
  }
  return m as Manifest;
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
