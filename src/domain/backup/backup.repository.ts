import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

/** One table's rows as a backup's manifest records them. */
export interface TableSum {
  table: string;
  rows: number;
  /** md5 over the md5 of each row's text, the row hashes sorted: equal wherever the rows are equal. */
  checksum: string;
}

/** The checksum of an empty table: md5 of no text (string_agg over no rows is null). */
const md5OfNothing = 'd41d8cd98f00b204e9800998ecf8427e';

/**
 * The key of the session advisory lock whose holder takes the scheduled backups, when several
 * instances share one PostgreSQL. A fixed number: any value no other lock of this database uses.
 */
const SCHEDULE_LOCK_KEY = 4_227_011_033;

/**
 * The SQL a backup needs: the tables and their sums, the migrations applied, the snapshot that
 * pg_dump shares, and the lock that elects one instance for scheduled backups.
 */
export class BackupRepository {
  constructor(private readonly db: Db) {}

  /**
   * Settings that make a row's text the same wherever it is read: times in UTC and in ISO form,
   * floats at full precision. `set local`: they end with the transaction, so the embedded
   * database's one session keeps its own.
   */
  async fixTextForms(): Promise<void> {
    await sql`set local timezone = 'UTC'`.execute(this.db);
    await sql`set local datestyle = 'ISO, YMD'`.execute(this.db);
    await sql`set local intervalstyle = 'postgres'`.execute(this.db);
    await sql`set local extra_float_digits = 1`.execute(this.db);
    await sql`set local bytea_output = 'hex'`.execute(this.db);
    // A large table's sum takes longer than a request may: this transaction reads only.
    await sql`set local statement_timeout = 0`.execute(this.db);
  }

  /** Every table of Keyward's schema, by name. */
  async tables(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      select tablename as name from pg_tables where schemaname = current_schema() order by tablename
    `.execute(this.db);
    return rows.map((r) => r.name);
  }

  /**
   * A table's row count and checksum. The row hashes are sorted rather than the rows ordered by
   * primary key: the same for every table, with or without a key, and independent of the order
   * a restore writes the rows in.
   */
  async sum(table: string): Promise<TableSum> {
    const { rows } = await sql<{ rows: number | string; checksum: string | null }>`
      select count(*) as rows, md5(string_agg(h, '' order by h)) as checksum
      from (select md5(t::text) as h from ${sql.table(table)} as t) as hashes
    `.execute(this.db);
    const row = rows[0];
    return { table, rows: Number(row?.rows ?? 0), checksum: row?.checksum ?? md5OfNothing };
  }

  /** The names of the migrations applied, in the order they were. */
  async appliedMigrations(): Promise<string[]> {
    const { rows } = await sql<{ name: string }>`
      select name from kysely_migration order by timestamp, name
    `.execute(this.db);
    return rows.map((r) => r.name);
  }

  /** Tables, views, sequences and types outside PostgreSQL's own schemas: none in an empty database. */
  async userObjects(): Promise<number> {
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname not in ('pg_catalog', 'information_schema', 'pg_toast')
        and n.nspname not like 'pg_temp%' and n.nspname not like 'pg_toast_temp%'
    `.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Inside a repeatable-read transaction: the snapshot's name, which pg_dump --snapshot takes, so
   * the dump and the manifest's sums see the very same rows.
   */
  async exportSnapshot(): Promise<string> {
    const { rows } = await sql<{ id: string }>`select pg_export_snapshot() as id`.execute(this.db);
    const id = rows[0]?.id;
    if (id === undefined) throw new Error('PostgreSQL exported no snapshot');
    return id;
  }

  /** Writes every dirty page out, so the embedded database's files hold all it has committed. */
  async checkpoint(): Promise<void> {
    await sql`checkpoint`.execute(this.db);
  }

  /** On this handle's own session: whether it now holds the scheduled backups' lock. */
  async tryScheduleLock(): Promise<boolean> {
    const { rows } = await sql<{ locked: boolean }>`
      select pg_try_advisory_lock(${SCHEDULE_LOCK_KEY}::bigint) as locked
    `.execute(this.db);
    return rows[0]?.locked === true;
  }

  async releaseScheduleLock(): Promise<void> {
    await sql`select pg_advisory_unlock(${SCHEDULE_LOCK_KEY}::bigint)`.execute(this.db);
  }

  /** A scratch database on the same server (`keyward backup --verify`); `name` is the caller's own. */
  async createDatabase(name: string): Promise<void> {
    await sql`create database ${sql.id(name)}`.execute(this.db);
  }

  async dropDatabase(name: string): Promise<void> {
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(this.db);
  }

  /** Whether the session still answers (a held lock is lost with its session). */
  async alive(): Promise<void> {
    await sql`select 1`.execute(this.db);
  }
}
