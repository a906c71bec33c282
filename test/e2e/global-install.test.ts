import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { startDemoServer, type DemoServer } from './support/demo-server.js';

// The CLI outside the project, as the README installs it: `npm install -g .` in the repository (a
// link to it), and a real copy, `npm pack` then `npm install -g` of the tarball, its dependencies
// from npm's cache. Both into a prefix of the test's own, run from a folder that holds nothing of
// Keyward's, against a running server.
const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const NPM = ['--no-audit', '--no-fund', '--prefer-offline', '--fetch-retries=5'];
const { version: VERSION } = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  version: string;
};

let live: DemoServer;
let work: string;
/** A folder outside the repository, where a user would run `keyward`. */
let elsewhere: string;
const prefixes = { copy: '', link: '' };

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-global-'));
  elsewhere = path.join(work, 'elsewhere');
  fs.mkdirSync(elsewhere);
  prefixes.copy = path.join(work, 'copy');
  prefixes.link = path.join(work, 'link');
  const [server] = await Promise.all([
    startDemoServer(),
    (async () => {
      const { stdout } = await run('npm', ['pack', ROOT, '--pack-destination', work, '--json'], {
        cwd: work,
        maxBuffer: 64 * 1024 * 1024,
      });
      const [packed] = JSON.parse(stdout.slice(stdout.indexOf('['))) as Array<{ filename: string }>;
      if (packed === undefined) throw new Error(`npm pack printed no file: ${stdout}`);
      await run(
        'npm',
        ['install', '-g', '--prefix', prefixes.copy, ...NPM, path.join(work, packed.filename)],
        {
          cwd: work,
          maxBuffer: 16 * 1024 * 1024,
        },
      );
      await run('npm', ['install', '-g', '--prefix', prefixes.link, ...NPM, ROOT], { cwd: work });
    })(),
  ]);
  live = server;
}, 300_000);
afterAll(async () => {
  await live?.stop();
  if (work !== undefined) fs.rmSync(work, { recursive: true, force: true });
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `keyward ARGS` from the folder outside the project, found on PATH as after a global install. */
async function keyward(prefix: string, args: string[], env: Record<string, string> = {}): Promise<Ran> {
  // Nothing of the test run's own Keyward settings: only what a user outside the project has.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !/^(KEYWARD_|DATA_DIR$|PORT$|DATABASE_URL$)/.test(name)),
  );
  try {
    const { stdout, stderr } = await run('keyward', args, {
      cwd: elsewhere,
      env: { ...inherited, PATH: `${path.join(prefix, 'bin')}:${process.env.PATH ?? ''}`, ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('keyward installed globally', () => {
  it('is a copy that needs nothing of the repository', () => {
    const installed = fs.realpathSync(path.join(prefixes.copy, 'lib/node_modules/keyward'));
    expect(installed.startsWith(fs.realpathSync(ROOT))).toBe(false);
  });

  for (const kind of ['copy', 'link'] as const) {
    it(`prints its version from outside the project (${kind})`, async () => {
      const result = await keyward(prefixes[kind], ['--version']);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout.trim()).toBe(VERSION);
    });
  }

  it('finds the server by KEYWARD_URL, and says it answers though no admin key is at hand', async () => {
    const result = await keyward(prefixes.copy, ['status'], { KEYWARD_URL: live.server.url });
    expect(result.code).toBe(2);
    expect(result.stdout).toContain(`server      ${live.server.url} (reachable)`);
    expect(result.stdout).toContain(`version     ${VERSION}`);
    // Where it looked: the data folder of the directory it runs in, which is not the server's.
    expect(result.stderr).toContain(
      `admin key missing: KEYWARD_ADMIN_KEY is not set and ${path.join(elsewhere, 'data/admin.key')} does not exist`,
    );
    expect(fs.readdirSync(elsewhere)).toEqual([]);
  });

  it('reads the whole status with the admin key', async () => {
    const result = await keyward(prefixes.copy, ['status'], live.cliEnv);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`database    ${onPostgres() ? 'PostgreSQL' : 'embedded'}`);
    expect(result.stdout).toMatch(/migrations {2}\d+ applied, none pending/);
  });

  it('tells when no server answers', async () => {
    const result = await keyward(prefixes.link, ['status'], { KEYWARD_URL: 'http://127.0.0.1:9' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('cannot reach the Keyward server at http://127.0.0.1:9');
  });
});
