import { sql, type Migration } from 'kysely';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle, type Db } from '../../src/db/client.js';
import { MIGRATIONS, migrateToLatest, migrationStatus } from '../../src/db/migrate.js';
import { NewerDatabaseError } from '../../src/db/migration-runner.js';
import { onPostgres, openTestDatabase } from '../support/database.js';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.js';

// The migration runner on the suite's kind of database: a failing migration leaves nothing of its
// run, a database from a newer Keyward is refused by name, a renumbered migration is recognised,
// and (PostgreSQL) two instances migrating one database at once apply each migration once.

const LATEST = Object.keys(MIGRATIONS).sort().at(-1) ?? '';
const scratches: ScratchDatabase[] = [];
const handles: DatabaseHandle[] = [];

/** A migrated database of this test's own: a scratch PostgreSQL database, or a snapshot copy. */
async function migratedDatabase(): Promise<Db> {
  let handle: DatabaseHandle;
  if (onPostgres()) {
    const scratch = await createScratchDatabase('keyward_migrations');
    scratches.push(scratch);
    handle = await openPostgres(scratch.url);
    await migrateToLatest(handle.db);
  } else {
    handle = await openTestDatabase();
  }
  handles.push(handle);
  return handle.db;
}

afterEach(async () => {
  await Promise.all(handles.splice(0).map((h) => h.close()));
});
afterAll(async () => {
  await Promise.all(scratches.map((s) => s.drop()));
});

async function tableExists(db: Db, table: string): Promise<boolean> {
  const { rows } = await sql<{ found: boolean }>`select to_regclass(${table}) is not null as found`.execute(
    db,
  );
  return rows[0]?.found === true;
}

async function appliedRows(db: Db): Promise<Array<{ name: string; timestamp: string }>> {
  const { rows } = await sql<{ name: string; timestamp: string }>`
    select name, timestamp from kysely_migration order by name`.execute(db);
  return rows;
}

async function appColumns(db: Db): Promise<string[]> {
  const { rows } = await sql<{ column_name: string }>`
    select column_name from information_schema.columns where table_name = 'apps' order by column_name`.execute(
    db,
  );
  return rows.map((r) => r.column_name);
}

async function appRows(db: Db): Promise<Array<{ id: string; name: string }>> {
  const { rows } = await sql<{ id: string; name: string }>`select id, name from apps order by id`.execute(db);
  return rows;
}

/** Changes schema and rows, then the next one fails half-way through its own statements. */
const halfWay: Record<string, Migration> = {
  '9990_test_changes': {
    up: async (db) => {
      await sql`create table upgrade_probe (n int)`.execute(db);
      await sql`insert into upgrade_probe values (1), (2)`.execute(db);
      await sql`alter table apps add column upgrade_probe text`.execute(db);
      await sql`update apps set name = name || ' (changed)'`.execute(db);
    },
  },
  '9991_test_fails': {
    up: async (db) => {
      await sql`create table upgrade_probe_two (n int)`.execute(db);
      await sql`select no_such_function()`.execute(db);
    },
  },
};

describe('a migration that fails half-way', () => {
  it('leaves the database as it was: no table, column, row or record of the run', async () => {
    const db = await migratedDatabase();
    const before = await appliedRows(db);
    const columns = await appColumns(db);
    // Migration 0120 made the console's own client: there is a row to change.
    const apps = await appRows(db);
    expect(apps.length).toBeGreaterThan(0);

    await expect(migrateToLatest(db, { ...MIGRATIONS, ...halfWay })).rejects.toThrow(/no_such_function/);

    expect(await tableExists(db, 'upgrade_probe')).toBe(false);
    expect(await tableExists(db, 'upgrade_probe_two')).toBe(false);
    expect(await appColumns(db)).toEqual(columns);
    expect(await appRows(db)).toEqual(apps);
    expect(await appliedRows(db)).toEqual(before);
    // Still usable: the good migration applies once the bad one is gone.
    expect(
      await migrateToLatest(db, { ...MIGRATIONS, '9990_test_changes': halfWay['9990_test_changes']! }),
    ).toEqual(['9990_test_changes']);
  });

  it.runIf(onPostgres())(
    'on an empty database, leaves it empty: every migration of the run undone',
    async () => {
      const scratch = await createScratchDatabase('keyward_migrations');
      scratches.push(scratch);
      const handle = await openPostgres(scratch.url);
      handles.push(handle);
      await expect(migrateToLatest(handle.db, { ...MIGRATIONS, ...halfWay })).rejects.toThrow(
        /no_such_function/,
      );
      const { rows } = await sql<{ n: number }>`
      select count(*)::int as n from pg_tables where schemaname = 'public'`.execute(handle.db);
      expect(rows[0]?.n).toBe(0);
    },
  );
});

describe('a database migrated by a newer Keyward', () => {
  it('is refused, naming its level and the level this Keyward knows, and left alone', async () => {
    const db = await migratedDatabase();
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', ${new Date().toISOString()})`.execute(
      db,
    );
    const before = await appliedRows(db);
    const refusal = migrateToLatest(db, {
      ...MIGRATIONS,
      '9990_test_changes': halfWay['9990_test_changes']!,
    });
    await expect(refusal).rejects.toBeInstanceOf(NewerDatabaseError);
    await expect(refusal).rejects.toThrow(
      `this database was migrated by a newer Keyward: its level is 9999_from_the_future, ` +
        `this Keyward knows up to 9990_test_changes; start the newer version or restore a backup`,
    );
    expect(await appliedRows(db)).toEqual(before);
    expect(await tableExists(db, 'upgrade_probe')).toBe(false);
  });

  it('is refused when the unknown migration is numbered below the level, naming it too', async () => {
    const db = await migratedDatabase();
    await sql`insert into kysely_migration (name, timestamp) values ('0157_unknown_here', ${new Date().toISOString()})`.execute(
      db,
    );
    await expect(migrateToLatest(db)).rejects.toThrow(
      `its level is ${LATEST} (with 0157_unknown_here), this Keyward knows up to ${LATEST}`,
    );
    // The status of a running older instance still answers.
    expect((await migrationStatus(db)).pending).toEqual([]);
  });
});

describe('a migration renumbered after it landed', () => {
  it('counts as applied under its old name, and is recorded under its new one', async () => {
    const db = await migratedDatabase();
    await sql`update kysely_migration set name = '0151_order_batches_request_id'
      where name = '0152_order_batches_request_id'`.execute(db);
    expect(await migrateToLatest(db)).toEqual([]);
    const names = (await appliedRows(db)).map((r) => r.name);
    expect(names).toContain('0152_order_batches_request_id');
    expect(names).not.toContain('0151_order_batches_request_id');
  });
});

describe.runIf(onPostgres())('two instances migrating one empty PostgreSQL database at once', () => {
  it('apply each migration exactly once between them, and both succeed', async () => {
    const scratch = await createScratchDatabase('keyward_migrations');
    scratches.push(scratch);
    // Counts its runs in a table of its own: a second run would add a second row.
    const counted: Record<string, Migration> = {
      ...MIGRATIONS,
      '9990_test_counts_runs': {
        up: async (db) => {
          await sql`create table if not exists upgrade_runs (n int)`.execute(db);
          await sql`insert into upgrade_runs values (1)`.execute(db);
        },
      },
    };
    const [a, b] = await Promise.all([openPostgres(scratch.url), openPostgres(scratch.url)]);
    handles.push(a, b);
    const [ranA, ranB] = await Promise.all([migrateToLatest(a.db, counted), migrateToLatest(b.db, counted)]);
    const all = Object.keys(counted).sort();
    // One instance did all the work; the other waited for its lock and found nothing left.
    expect([ranA, ranB].map((ran) => ran.length).sort((x, y) => x - y)).toEqual([0, all.length]);
    expect((await appliedRows(a.db)).map((r) => r.name)).toEqual(all);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from upgrade_runs`.execute(a.db);
    expect(rows[0]?.n).toBe(1);
  });
});
