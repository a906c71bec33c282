import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/client.js';
import { testDatabaseUrl } from '../support/database.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';
import { appToken, createApp, type LiveApp } from '../reliability/support/live-api.js';
import { startOrderLoad } from './support/backup-load.js';

// `keyward backup` and `keyward restore` on PostgreSQL: pg_dump under order writes, restored into
// a new empty database, and scheduled backups taken by one of two instances. Each test's databases
// are its own, made beside the suite's and dropped after.
const suiteUrl = testDatabaseUrl();
const ADMIN_KEY = 'backup-pg-test-admin-key-0123456789abcdef';
const LONG = { timeout: 300_000 };
const made: string[] = [];
let root: string;

/** A new empty database on the suite's server, dropped in afterAll. */
async function scratchDatabase(label: string): Promise<string> {
  const name = `kw_${label}_${process.pid}_${Date.now()}`;
  const client = new pg.Client({ connectionString: suiteUrl });
  await client.connect();
  await client.query(`create database ${name}`);
  await client.end();
  made.push(name);
  const url = new URL(suiteUrl ?? '');
  url.pathname = `/${name}`;
  return url.toString();
}

beforeAll(() => {
  if (suiteUrl !== undefined) root = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-backup-pg-'));
});
afterAll(async () => {
  if (suiteUrl === undefined) return;
  const client = new pg.Client({ connectionString: suiteUrl });
  await client.connect();
  for (const name of made) await client.query(`drop database if exists ${name} with (force)`);
  await client.end();
  fs.rmSync(root, { recursive: true, force: true });
});

describe.runIf(suiteUrl !== undefined)('keyward backup and restore on PostgreSQL', () => {
  let server: ServerProcess;
  let source: string;
  let app: LiveApp;

  beforeAll(async () => {
    source = await scratchDatabase('source');
    server = await startServerProcess({
      DATABASE_URL: source,
      DATA_DIR: path.join(root, 'data'),
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
    });
    app = await createApp(server.url, ADMIN_KEY);
  }, 180_000);
  afterAll(async () => server?.stop());

  it(
    'backs up with pg_dump under order writes; a new database restored from it holds every order answered before',
    LONG,
    async () => {
      const token = await appToken(server.url, app);
      const env = { DATABASE_URL: source, DATA_DIR: path.join(root, 'data'), KEYWARD_URL: server.url };
      const load = startOrderLoad(server.url, app, token);
      await load.until(6);
      const began = Date.now();
      const file = path.join(root, 'pg.kwbackup');
      const taken = await runCli(['backup', file, '--no-encrypt'], env);
      await load.until(load.answered.length + 4);
      await load.stop();
      expect(taken.code, taken.stderr).toBe(0);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      const before = load.answered.filter((o) => o.answeredAt < began).map((o) => o.channelOrderId);

      const target = await scratchDatabase('target');
      const restored = await runCli(['restore', file], {
        DATABASE_URL: target,
        DATA_DIR: path.join(root, 'restored'),
      });
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(/equal to the backup's manifest/);
      const handle = await openPostgres(target);
      try {
        const found = await handle.db
          .selectFrom('order_batches')
          .select('channel_order_id')
          .where('channel_order_id', 'in', before)
          .execute();
        expect(found.map((r) => r.channel_order_id).sort()).toEqual([...before].sort());
      } finally {
        await handle.close();
      }

      const verified = await runCli(['backup', '--verify', file], env);
      expect(verified.code, verified.stderr).toBe(0);
      // Into a database that holds anything: refused, and nothing written.
      const again = await runCli(['restore', file], {
        DATABASE_URL: source,
        DATA_DIR: path.join(root, 'again'),
      });
      expect(again.code).toBe(1);
      expect(again.stderr).toMatch(/is not empty/);
    },
  );
});

describe.runIf(suiteUrl !== undefined)('scheduled backups of two instances on one PostgreSQL', () => {
  it('takes one backup per period between them and keeps BACKUP_KEEP', LONG, async () => {
    const url = await scratchDatabase('scheduled');
    const backups = path.join(root, 'scheduled');
    const env = {
      DATABASE_URL: url,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
      BACKUP_DIR: backups,
      BACKUP_EVERY: '3s',
      BACKUP_KEEP: '2',
      // Asked for outright: without it (or BACKUP_PASSPHRASE) the servers refuse to start.
      BACKUP_ENCRYPT: '0',
    };
    const instances = await Promise.all([
      startServerProcess({ ...env, DATA_DIR: path.join(root, 'one') }),
      startServerProcess({ ...env, DATA_DIR: path.join(root, 'two') }),
    ]);
    const written = () =>
      instances.flatMap((s) =>
        [
          ...s
            .output()
            .matchAll(/"file":"[^"]*keyward-backup-(\d{8}T\d{6}Z)\.kwbackup"[^\n]*scheduled backup written/g),
        ].map((m) => m[1] ?? ''),
      );
    try {
      while (written().length < 4) await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      await Promise.all(instances.map((s) => s.stop()));
    }
    const times = written()
      .map((t) =>
        Date.parse(t.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z')),
      )
      .sort((a, b) => a - b);
    // Never two in one period, whichever instance took them.
    for (let i = 1; i < times.length; i += 1) {
      expect((times[i] ?? 0) - (times[i - 1] ?? 0)).toBeGreaterThanOrEqual(3000);
    }
    const kept = fs.readdirSync(backups).filter((name) => name.endsWith('.kwbackup'));
    expect(kept).toHaveLength(2);
    expect(instances.map((s) => s.output()).join('\n')).toMatch(/old scheduled backup deleted/);
  });
});
