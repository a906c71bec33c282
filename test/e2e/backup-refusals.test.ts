import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupBytes } from '../../src/domain/backup/backup-file.js';
import type { Manifest } from '../../src/domain/backup/manifest.js';
import { writeWhole } from '../../src/domain/backup/write-file.js';
import { testDatabaseUrl } from '../support/database.js';
import { TEST_ENV } from '../support/test-env.js';

// `keyward restore`, `keyward backup --verify` and `keyward backup` refusing before they touch
// anything, as real processes, on either database: a crafted file, and a backup asked for without
// a passphrase or --no-encrypt. None needs a server: each is refused before one would be called.
const BIN = path.resolve(import.meta.dirname, '../../bin/keyward.js');
/**
 * Far above a refusal's time (the CLI's start under tsx on a loaded machine), so it only stops a
 * process that would never end: the crafted file once made the reader spin forever.
 */
const KILL_AFTER_MS = 90_000;
const LONG = { timeout: 240_000 };

let root: string;
let env: Record<string, string>;
beforeAll(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-backup-refusals-'));
  env = {
    ...TEST_ENV,
    DATA_DIR: path.join(root, 'data'),
    DATABASE_URL: testDatabaseUrl() ?? '',
    // Nothing answers here: the embedded path must refuse before it calls the server.
    KEYWARD_URL: 'http://127.0.0.1:9',
    KEYWARD_ADMIN_KEY: 'backup-refusals-admin-key-0123456789abcdef',
    BACKUP_PASSPHRASE: '',
    BACKUP_ENCRYPT: '',
  };
});
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** The CLI run to its end, or killed after KILL_AFTER_MS: never left to hang the suite. */
function runCli(args: string[], extra: Record<string, string> = {}): Promise<Ended> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env, ...extra },
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: KILL_AFTER_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A process that ended by itself, with exit code 1. */
function refused(result: Ended, label: string): void {
  expect(result.signal, `${label} was killed after ${KILL_AFTER_MS} ms: it did not end`).toBeNull();
  expect(result.code, `${label}\n${result.stderr}`).toBe(1);
}

describe('a crafted backup', () => {
  it(
    'whose first part claims a fraction of a byte more is refused by restore and --verify, naming the part',
    LONG,
    async () => {
      // What made the reader loop: after the database part's whole bytes, half a byte still due,
      // taken as an empty slice of the next part's bytes, forever. Its checksum is made to match.
      const database = Buffer.from('not really a database: some bytes of one');
      const keys = Buffer.from('{"keys":[]}');
      const manifest: Manifest = {
        format: 1,
        keywardVersion: '0.1.0',
        database: 'embedded',
        databaseFormat: 'pglite-datadir',
        migrations: [],
        createdAt: new Date().toISOString(),
        tables: [],
        parts: [
          { name: 'database', bytes: database.length + 0.5, sha256: '0'.repeat(64) },
          { name: 'runtime-keys.json', bytes: keys.length, sha256: '0'.repeat(64) },
        ],
      };
      const file = path.join(root, 'crafted.kwbackup');
      const sources = [
        { name: 'database', bytes: database },
        { name: 'runtime-keys.json', bytes: keys },
      ];
      await writeWhole(file, backupBytes(manifest, sources, undefined));

      const target = path.join(root, 'never-restored');
      const [restored, verified] = await Promise.all([
        runCli(['restore', file], { DATA_DIR: target }),
        runCli(['backup', '--verify', file]),
      ]);
      for (const [result, label] of [
        [restored, 'keyward restore'],
        [verified, 'keyward backup --verify'],
      ] as const) {
        refused(result, label);
        expect(result.stderr).toContain(
          `manifest.parts[0].bytes: ${database.length + 0.5} is not a whole number`,
        );
      }
      expect(fs.existsSync(target)).toBe(false);
    },
  );
});

describe('keyward backup without a passphrase', () => {
  it('is refused unless --no-encrypt is given, and writes nothing', LONG, async () => {
    const file = path.join(root, 'never.kwbackup');
    const result = await runCli(['backup', file]);
    refused(result, 'keyward backup');
    expect(result.stderr).toMatch(/a backup is encrypted/);
    expect(result.stderr).toMatch(/--passphrase-file FILE or BACKUP_PASSPHRASE/);
    expect(result.stderr).toMatch(/--no-encrypt/);
    expect(fs.readdirSync(root).filter((name) => name.includes('never'))).toEqual([]);
  });

  it('is refused when --no-encrypt and a passphrase are both given', LONG, async () => {
    const pass = path.join(root, 'pass');
    fs.writeFileSync(pass, 'correct horse battery staple\n', { mode: 0o600 });
    const [fromFile, fromEnv] = await Promise.all([
      runCli(['backup', path.join(root, 'never-1.kwbackup'), '--no-encrypt', '--passphrase-file', pass]),
      runCli(['backup', path.join(root, 'never-2.kwbackup'), '--no-encrypt'], {
        BACKUP_PASSPHRASE: 'correct horse battery staple',
      }),
    ]);
    refused(fromFile, 'keyward backup --no-encrypt --passphrase-file');
    expect(fromFile.stderr).toMatch(/--no-encrypt, but --passphrase-file is given/);
    refused(fromEnv, 'BACKUP_PASSPHRASE=… keyward backup --no-encrypt');
    expect(fromEnv.stderr).toMatch(/--no-encrypt, but BACKUP_PASSPHRASE is set/);
    expect(fs.readdirSync(root).filter((name) => name.includes('never'))).toEqual([]);
  });
});
