import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onPostgres } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { TEST_ENV } from '../support/test-env.js';
import { freshDatabase, type FreshDatabase } from './support/demo-server.js';

// `keyward serve` with LOG_FORMAT=pretty, as a person meets it: progress while the database
// opens, then one banner. Two starts on one database of its own: the first creates it (and the
// admin key file), the second opens it with the key in the variable and a separate admin listener.
let database: FreshDatabase;
let dataDir: string;

/** On the PostgreSQL pass, the URL carries a password (the test server trusts local connections). */
const PASSWORD = `never-shown-${randomBytes(4).toString('hex')}`;
let databaseUrl: string;
let location: string;

beforeAll(async () => {
  database = await freshDatabase();
  dataDir = database.env.DATA_DIR;
  if (onPostgres()) {
    const url = new URL(database.env.DATABASE_URL);
    url.password = PASSWORD;
    databaseUrl = url.toString();
    location = `${url.hostname}:${url.port}${url.pathname}`;
  } else {
    databaseUrl = '';
  }
});
afterAll(async () => database?.remove());

/** Serves with LOG_FORMAT=pretty on the file's database, once the banner is out; `run` looks at it. */
async function servePretty(
  env: Record<string, string>,
  run: (server: ServerProcess, output: string, shown: string[]) => Promise<void>,
): Promise<void> {
  const server = await startServerProcess({
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    LOG_FORMAT: 'pretty',
    ...env,
  });
  try {
    await server.waitFor(/^ {2}npx keyward demo/m);
    await run(server, server.output(), server.output().split('\n'));
  } finally {
    await server.stop();
  }
}

describe('the start banner (LOG_FORMAT=pretty)', () => {
  // Each starts a real server inside the test: the first a fresh embedded database.
  it(
    'says what the database is doing, then where everything is, never a secret',
    { timeout: 120_000 },
    async () => {
      await servePretty({ KEYWARD_ADMIN_KEY: '' }, async (server, output, shown) => {
        expect(shown).toContain(
          onPostgres()
            ? `  connecting to PostgreSQL at ${location}`
            : `  creating the embedded database in ${dataDir} (first start: a few seconds)`,
        );
        expect(shown).toContain('  applying migrations…');
        expect(shown.some((l) => /^ {2}migrations: applied \d+$/.test(l))).toBe(true);
        expect(shown).toContain(`  URL        ${server.url}`);
        expect(shown).toContain(`  console    ${server.url}/console`);
        expect(shown).toContain(`  API docs   ${server.url}/docs`);
        expect(shown).toContain(
          onPostgres() ? `  database   PostgreSQL at ${location}` : `  database   embedded, in ${dataDir}`,
        );
        const keyFile = path.join(dataDir, 'admin.key');
        expect(shown).toContain(
          `  admin key  in ${keyFile} (generated at this start; the CLI reads it there)`,
        );
        expect(shown.some((l) => l.startsWith('  admin API'))).toBe(false);
        // The next step carries this server's address and port, for the CLI and the README's curl.
        const next = shown.indexOf(`  export KEYWARD_URL=${server.url}`);
        expect(next).toBeGreaterThan(0);
        expect(shown[next + 1]?.startsWith('  npx keyward demo')).toBe(true);
        // The banner comes once, after the server listens.
        expect(output.indexOf('Server listening at')).toBeLessThan(output.indexOf('is ready'));
        expect(output.split('is ready')).toHaveLength(2);

        // Log lines are readable, not JSON; no secret anywhere.
        expect(shown.filter((l) => l.startsWith('{'))).toEqual([]);
        expect(shown.some((l) => /^\d\d:\d\d:\d\d INFO {2}Server listening at /.test(l))).toBe(true);
        expect(output).not.toContain(fs.readFileSync(keyFile, 'utf8').trim());
        expect(output).not.toContain(PASSWORD);
        expect(output).not.toMatch(/postgres(ql)?:\/\//);
        expect(output).not.toContain('postgres@');
      });
    },
  );

  it(
    'on a later start names the key variable and the admin listener; GET / goes to the console',
    { timeout: 120_000 },
    async () => {
      const adminKey = randomBytes(16).toString('hex');
      await servePretty({ KEYWARD_ADMIN_KEY: adminKey, ADMIN_PORT: '0' }, async (server, output, shown) => {
        if (!onPostgres()) expect(shown).toContain(`  opening the embedded database in ${dataDir}`);
        expect(shown).toContain('  migrations: up to date');
        expect(shown).toContain('  admin key  from the KEYWARD_ADMIN_KEY variable');
        const adminUrl = /admin API listening at (http:\/\/\S+)/.exec(output)?.[1];
        expect(adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
        expect(shown).toContain(`  admin API  ${adminUrl}`);
        expect(output).not.toContain(adminKey);

        // A browser opened at the server's address lands on the console, which links /docs.
        const response = await fetch(`${server.url}/`, { redirect: 'manual' });
        expect(response.status).toBe(302);
        expect(response.headers.get('location')).toBe('/console');
        expect(response.headers.get('x-content-type-options')).toBe('nosniff');
        expect(response.headers.get('x-frame-options')).toBe('DENY');
        expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
        expect((await fetch(`${server.url}/`)).status).toBe(200);
      });
    },
  );
});

describe('LOG_FORMAT unset', () => {
  // What `npm start` does in a terminal: util-linux's `script` gives the server a pseudo-terminal
  // for its stdout, the way a person's shell would.
  it('is the banner on a terminal', { timeout: 120_000 }, async () => {
    const command = [process.execPath, path.resolve(import.meta.dirname, '../../bin/keyward.js'), 'serve']
      .map((word) => `'${word}'`)
      .join(' ');
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: {
        ...process.env,
        ...TEST_ENV,
        DATA_DIR: dataDir,
        DATABASE_URL: databaseUrl,
        PORT: '0',
        LOG_FORMAT: '',
      },
      // Its own process group, so the server inside the terminal stops with it.
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let output = '';
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no banner on the terminal:\n${output}`)), 90_000);
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          if (/npx keyward demo/.test(output)) {
            clearTimeout(timer);
            resolve();
          }
        });
        void exited.then(() => reject(new Error(`the server exited:\n${output}`)));
      });
      expect(output).toMatch(/Keyward \S+ is ready/);
      expect(output).not.toContain('{"level"');
    } finally {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
      await exited;
    }
  });
});
