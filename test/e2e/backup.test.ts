import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openEmbedded } from '../../src/db/client.js';
import { backupBytes, openBackup } from '../../src/domain/backup/backup-file.js';
import { partialName, writeWhole } from '../../src/domain/backup/write-file.js';
import { onPostgres } from '../support/database.js';
import { runCli, startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  addMembers,
  appToken,
  call,
  createApp,
  createEnterprise,
  memberHeaders,
  ME,
  postBatch,
  purchaseBatch,
  type LiveApp,
  type LiveEnterprise,
} from '../reliability/support/live-api.js';
import { startOrderLoad } from './support/backup-load.js';

// `keyward backup` and `keyward restore` on the embedded database, against a real server taking
// order writes. PostgreSQL's side is backup-postgres.test.ts.
const ADMIN_KEY = 'backup-test-admin-key-0123456789abcdef';
const BIN = path.resolve(import.meta.dirname, '../../bin/keyward.js');
const LONG = { timeout: 300_000 };

let root: string;
let server: ServerProcess;
let env: Record<string, string>;
let app: LiveApp;
let token: string;
let enterprise: LiveEnterprise;
/** The backup taken under load, whole. */
let underLoad: string;

const dir = (name: string) => path.join(root, name);
const envFor = (dataDir: string) => ({ ...env, DATA_DIR: dataDir });

beforeAll(async () => {
  if (onPostgres()) return;
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-backup-'));
  env = { DATA_DIR: dir('data'), DATABASE_URL: '', KEYWARD_ADMIN_KEY: ADMIN_KEY, BACKUP_PASSPHRASE: '' };
  server = await startServerProcess(env);
  env = { ...env, KEYWARD_URL: server.url };
  app = await createApp(server.url, ADMIN_KEY);
  token = await appToken(server.url, app);
  enterprise = await createEnterprise(server.url, ADMIN_KEY, app, token);
  await addMembers(server.url, token, enterprise, 3);
  const { body } = purchaseBatch(app, { channelCustomerId: enterprise.channelCustomerId, assets: 3 });
  expect((await postBatch(server.url, app, token, body)).code).toBe(0);
}, 180_000);
afterAll(async () => {
  if (onPostgres()) return;
  await server.stop();
  fs.rmSync(root, { recursive: true, force: true });
});

describe.skipIf(onPostgres())('keyward backup and restore on the embedded database', () => {
  it(
    'backs up under order writes; the restore holds every order answered before, counts and checksums equal',
    LONG,
    async () => {
      const load = startOrderLoad(server.url, app, token);
      await load.until(6);
      const began = Date.now();
      underLoad = dir('under-load.kwbackup');
      // Unencrypted, asked for: the tests below read and rewrite it without a passphrase.
      const result = await runCli(['backup', underLoad, '--no-encrypt'], env);
      await load.until(load.answered.length + 4);
      await load.stop();
      expect(result.code, result.stderr).toBe(0);
      expect(fs.statSync(underLoad).mode & 0o777).toBe(0o600);
      const before = load.answered.filter((o) => o.answeredAt < began).map((o) => o.channelOrderId);
      expect(before.length).toBeGreaterThanOrEqual(6);

      // restore compares every table's count and checksum with the manifest, and fails otherwise
      const restored = await runCli(['restore', underLoad], envFor(dir('restored')));
      expect(restored.code, restored.stderr).toBe(0);
      expect(restored.stdout).toMatch(/equal to the backup's manifest/);
      const handle = await openEmbedded({ dataDir: dir('restored') });
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
      const verified = await runCli(['backup', '--verify', underLoad, '--json'], env);
      expect(verified.code, verified.stderr).toBe(0);
      expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    },
  );

  it('gives a restored server that answers reads exactly as the old one', LONG, async () => {
    // Tokens live in the database: the same ones serve on both servers.
    const headers = memberHeaders(token, enterprise.adminToken);
    const file = dir('quiet.kwbackup');
    expect((await runCli(['backup', file, '--no-encrypt'], env)).code).toBe(0);
    expect((await runCli(['restore', file], envFor(dir('second')))).code).toBe(0);
    const second = await startServerProcess({ ...env, DATA_DIR: dir('second'), KEYWARD_URL: '' });
    try {
      const audit = (url: string) =>
        runCli(['audit', '--json', '--limit', '1000'], { ...env, KEYWARD_URL: url });
      const [oldAudit, newAudit] = await Promise.all([audit(server.url), audit(second.url)]);
      expect(oldAudit.code, oldAudit.stderr).toBe(0);
      expect(newAudit.stdout).toBe(oldAudit.stdout);
      const eid = enterprise.enterpriseGlobalId;
      for (const read of [`/enterprise/${eid}/members?pageSize=500`, `/enterprise/${eid}/asset/assetNums`]) {
        const [a, b] = await Promise.all(
          [server.url, second.url].map((base) => call(base, 'GET', `${ME}${read}`, { headers })),
        );
        expect(a?.code, a?.body).toBe(0);
        expect(b?.body).toBe(a?.body);
      }
      const apps = (url: string) => runCli(['app', 'list', '--json'], { ...env, KEYWARD_URL: url });
      expect((await apps(second.url)).stdout).toBe((await apps(server.url)).stdout);
    } finally {
      await second.stop();
    }
  });

  it('leaves no file under the final name when the CLI is killed mid-backup', LONG, async () => {
    const file = dir('killed.kwbackup');
    const child = spawn(process.execPath, [BIN, 'backup', file, '--no-encrypt'], {
      env: { ...process.env, ...env },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const partial = partialName(file).replace(String(process.pid), String(child.pid));
    while (!fs.existsSync(partial)) await new Promise((resolve) => setTimeout(resolve, 10));
    child.kill('SIGKILL');
    await exited;
    expect(fs.existsSync(file)).toBe(false);
    // The server carries on.
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('refuses a truncated or altered backup, in restore and in --verify', LONG, async () => {
    const whole = fs.readFileSync(underLoad);
    const truncated = dir('truncated.kwbackup');
    fs.writeFileSync(truncated, whole.subarray(0, Math.floor(whole.length / 2)));
    const altered = dir('altered.kwbackup');
    const changed = Buffer.from(whole);
    const at = Math.floor(changed.length / 2);
    changed[at] = (changed[at] ?? 0) ^ 0xff;
    fs.writeFileSync(altered, changed);
    for (const [file, why] of [
      [truncated, /truncated/],
      [altered, /altered/],
    ] as const) {
      const restored = await runCli(['restore', file], envFor(dir(`never-${path.basename(file)}`)));
      expect(restored.code).toBe(1);
      expect(restored.stderr).toMatch(why);
      expect(fs.existsSync(dir(`never-${path.basename(file)}`))).toBe(false);
      const verified = await runCli(['backup', '--verify', file], env);
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(why);
    }
  });

  it('restores only into an empty DATA_DIR, never into one in use', LONG, async () => {
    const inUse = await runCli(['restore', underLoad], env);
    expect(inUse.code).toBe(1);
    expect(inUse.stderr).toMatch(/in use by process \d+/);
    fs.mkdirSync(dir('occupied'));
    fs.writeFileSync(path.join(dir('occupied'), 'notes.txt'), 'mine');
    const occupied = await runCli(['restore', underLoad], envFor(dir('occupied')));
    expect(occupied.code).toBe(1);
    expect(occupied.stderr).toMatch(/is not empty \(notes\.txt\)/);
    expect(fs.readdirSync(dir('occupied'))).toEqual(['notes.txt']);
  });

  it('refuses a backup of a newer Keyward, naming both versions', LONG, async () => {
    const opened = await openBackup(underLoad, undefined, root);
    const newer = dir('newer.kwbackup');
    try {
      const manifest = {
        ...opened.manifest,
        keywardVersion: '99.0.0',
        migrations: [...opened.manifest.migrations, '9999_from_the_future'],
      };
      const sources = manifest.parts.map((p) => ({
        name: p.name,
        bytes: { file: opened.parts.get(p.name) ?? '' },
      }));
      await writeWhole(newer, backupBytes(manifest, sources, undefined));
    } finally {
      opened.dispose();
    }
    for (const args of [
      ['restore', newer],
      ['backup', '--verify', newer],
    ]) {
      const refused = await runCli(args, envFor(dir('never-newer')));
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/Keyward 99\.0\.0 \(migration level 9999_from_the_future\)/);
      expect(refused.stderr).toMatch(/this Keyward 0\.\d+\.\d+ \(migration level \d{4}_\w+\)/);
    }
  });

  it(
    'encrypts with a passphrase from a file, round-trips, and refuses a wrong one; the admin key only when asked',
    LONG,
    async () => {
      fs.writeFileSync(dir('pass'), 'correct horse battery staple\n', { mode: 0o600 });
      fs.writeFileSync(dir('wrong'), 'wrong horse\n', { mode: 0o600 });
      // The server here takes its key from KEYWARD_ADMIN_KEY; the file is what a backup would carry.
      fs.writeFileSync(path.join(dir('data'), 'admin.key'), `${ADMIN_KEY}\n`, { mode: 0o600 });
      const file = dir('sealed.kwbackup');
      const taken = await runCli(
        ['backup', file, '--passphrase-file', dir('pass'), '--include-admin-key'],
        env,
      );
      expect(taken.code, taken.stderr).toBe(0);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file).includes(Buffer.from(enterprise.adminAccount))).toBe(false);
      const wrong = await runCli(['backup', '--verify', file, '--passphrase-file', dir('wrong')], env);
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/wrong passphrase/);
      const none = await runCli(['restore', file], envFor(dir('never-sealed')));
      expect(none.stderr).toMatch(/is encrypted: give its passphrase/);
      const restored = await runCli(
        ['restore', file, '--passphrase-file', dir('pass')],
        envFor(dir('unsealed')),
      );
      expect(restored.code, restored.stderr).toBe(0);
      expect(fs.readFileSync(path.join(dir('unsealed'), 'admin.key'), 'utf8')).toBe(`${ADMIN_KEY}\n`);
      expect(fs.statSync(path.join(dir('unsealed'), 'admin.key')).mode & 0o777).toBe(0o600);
      // Without --include-admin-key the key stays out.
      const plain = await openBackup(underLoad, undefined, root);
      try {
        expect([...plain.parts.keys()]).not.toContain('admin.key');
      } finally {
        plain.dispose();
      }
    },
  );
});
