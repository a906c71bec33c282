import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openEmbedded, openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { onPostgres } from '../support/database.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';
import { runCli, startServerProcess } from '../support/server-process.js';
import { readBack, type FixtureExpectation, type ReadBack } from '../support/upgrade-read-back.js';

// Data made by earlier landed versions (test/fixtures/upgrade, by scripts/make-upgrade-fixtures.ts),
// opened by today's `keyward serve` on this pass's database: the migrations apply, the data reads
// back through the APIs as the old version answered, and a second start changes nothing. Then a
// database migrated past what this Keyward knows is refused by `keyward serve` and `keyward migrate`.

const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/upgrade');
const LEVELS = fs
  .readdirSync(FIXTURES)
  .filter((dir) => fs.existsSync(path.join(FIXTURES, dir, 'expected.json')))
  .sort();
const KIND = onPostgres() ? 'postgres' : 'embedded';
const TODAY = Object.keys(MIGRATIONS).sort();
/** Renumbered after it landed (see RENUMBERED in src/db/migration-runner.ts). */
const NOW_NAMED: Record<string, string> = {
  '0151_order_batches_request_id': '0152_order_batches_request_id',
};
/** Several server starts on a loaded machine, each one opening a cluster. */
const LIMIT_MS = 600_000;

const scratches: ScratchDatabase[] = [];
const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(scratches.map((s) => s.drop()));
  for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
});

function expectationOf(level: string): FixtureExpectation {
  return JSON.parse(
    fs.readFileSync(path.join(FIXTURES, level, 'expected.json'), 'utf8'),
  ) as FixtureExpectation;
}

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-upgrade-'));
  dirs.push(dir);
  return dir;
}

/** The fixture's data directory unpacked into a new DATA_DIR, as the old server left it. */
function unpackDataDir(level: string): string {
  const dataDir = tempDir();
  const tar = brotliDecompressSync(fs.readFileSync(path.join(FIXTURES, level, 'data-dir.tar.br')));
  const untar = spawnSync('tar', ['-xf', '-', '-C', dataDir], { input: tar });
  if (untar.status !== 0) throw new Error(`tar: ${untar.stderr.toString()}`);
  return dataDir;
}

/** The fixture's dump restored into a new scratch database; its URL. */
async function restoreDump(level: string): Promise<string> {
  const scratch = await createScratchDatabase('keyward_upgrade');
  scratches.push(scratch);
  const client = new pg.Client({ connectionString: scratch.url });
  await client.connect();
  try {
    await client.query(gunzipSync(fs.readFileSync(path.join(FIXTURES, level, 'postgres.sql.gz'))).toString());
  } finally {
    await client.end();
  }
  return scratch.url;
}

/** Where this pass's kind of database gets the fixture: the server's environment. */
async function databaseEnv(level: string): Promise<Record<string, string>> {
  if (KIND === 'embedded') return { DATA_DIR: unpackDataDir(level) };
  return { DATABASE_URL: await restoreDump(level), DATA_DIR: tempDir() };
}

async function openDirect(env: Record<string, string>): Promise<DatabaseHandle> {
  return env.DATABASE_URL !== undefined
    ? openPostgres(env.DATABASE_URL)
    : openEmbedded({ dataDir: env.DATA_DIR as string });
}

interface Row {
  name: string;
  timestamp: string;
}

/** kysely_migration, read with the server stopped (the embedded database has one opener). */
async function migrationRows(env: Record<string, string>): Promise<Row[]> {
  const handle = await openDirect(env);
  try {
    const { rows } = await sql<Row>`select name, timestamp from kysely_migration order by name`.execute(
      handle.db,
    );
    return rows;
  } finally {
    await handle.close();
  }
}

/** Leases in a fixed order: the list comes newest first, and two may share a millisecond. */
function sortedLeases(read: ReadBack): ReadBack {
  const key = (lease: unknown) => JSON.stringify(lease);
  return { ...read, leases: [...read.leases].sort((a, b) => key(a).localeCompare(key(b))) };
}

describe.each(LEVELS)(`data made at level %s, opened by today's Keyward on the ${KIND} database`, (level) => {
  const expected = expectationOf(level);
  const side = expected[KIND];

  it(
    'migrates, reads back as the old version answered, and starts a second time without migrating',
    async () => {
      const env = { ...(await databaseEnv(level)), KEYWARD_ADMIN_KEY: expected.adminKey };
      const before = await migrationRows(env);
      expect(before.map((r) => r.name).sort()).toEqual([...expected.migrations].sort());

      const first = await startServerProcess(env);
      let actual: ReadBack;
      try {
        actual = await readBack(first.url, expected.adminKey, side.facts);
      } finally {
        expect(await first.stop()).toBe(0);
      }
      expect(sortedLeases(actual)).toMatchObject(sortedLeases(side.readBack));

      // Every migration of today's is there; the old rows are untouched, the renumbered one renamed.
      const migrated = await migrationRows(env);
      expect(migrated.map((r) => r.name)).toEqual(TODAY);
      const old = new Map(before.map((r) => [NOW_NAMED[r.name] ?? r.name, r.timestamp]));
      for (const row of migrated) {
        if (old.has(row.name)) expect(row.timestamp).toBe(old.get(row.name));
      }
      expect(migrated.filter((r) => !old.has(r.name)).length).toBe(TODAY.length - old.size);

      const second = await startServerProcess(env);
      expect(await second.stop()).toBe(0);
      expect(await migrationRows(env)).toEqual(migrated);
    },
    LIMIT_MS,
  );
});

describe(`a ${KIND} database migrated by a newer Keyward`, () => {
  const newest = LEVELS.at(-1) as string;
  const future = '9999_from_a_newer_keyward';
  const refusal =
    `this database was migrated by a newer Keyward: its level is ${future}, ` +
    `this Keyward knows up to ${TODAY.at(-1)}; start the newer version or restore a backup`;

  it(
    'is refused at start by `keyward serve` and by `keyward migrate`, naming both levels',
    async () => {
      const env = { ...(await databaseEnv(newest)), KEYWARD_ADMIN_KEY: 'x'.repeat(32), PORT: '0' };
      const handle = await openDirect(env);
      try {
        await migrateToLatest(handle.db);
        await sql`insert into kysely_migration (name, timestamp)
          values (${future}, ${new Date().toISOString()})`.execute(handle.db);
      } finally {
        await handle.close();
      }
      for (const command of ['migrate', 'serve']) {
        const result = await runCli([command], env);
        expect(result.code, `${command}: ${result.stdout}${result.stderr}`).toBe(1);
        expect(result.stderr).toContain(`keyward: ${refusal}`);
        expect(result.stdout).not.toMatch(/Server listening/);
      }
      // Refused without a change: the newer version still finds its database as it left it.
      expect((await migrationRows(env)).map((r) => r.name)).toEqual([...TODAY, future]);
    },
    LIMIT_MS,
  );
});

describe.runIf(KIND === 'postgres')('two servers started together on one empty PostgreSQL database', () => {
  it(
    'both start, and each migration is applied once',
    async () => {
      const scratch = await createScratchDatabase('keyward_upgrade');
      scratches.push(scratch);
      const env = { DATABASE_URL: scratch.url, DATA_DIR: tempDir(), KEYWARD_ADMIN_KEY: 'y'.repeat(32) };
      const servers = await Promise.all([startServerProcess(env), startServerProcess(env)]);
      try {
        for (const server of servers) expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      } finally {
        await Promise.all(servers.map((server) => server.stop()));
      }
      // Both started: run twice, a migration would have failed on the tables it had made already.
      const rows = await migrationRows(env);
      expect(rows.map((r) => r.name)).toEqual(TODAY);
    },
    LIMIT_MS,
  );
});
