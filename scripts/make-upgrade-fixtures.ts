// Makes the upgrade fixtures of test/fixtures/upgrade/: for each landed schema level in LEVELS, that
// commit's Keyward is run from a copy of its tree, loads the demo data set and checks out runtime
// leases, once on an embedded DATA_DIR and once on a fresh PostgreSQL database; the data directory
// is kept as a brotli-compressed tar, the database as a plain SQL dump, and what the APIs answered as expected.json.
// test/db/upgrade-fixtures.test.ts opens them with today's code. See test/fixtures/upgrade/README.md.
//
//   npx tsx scripts/make-upgrade-fixtures.ts [COMMIT…]
//   (PostgreSQL from PGADMIN_URL, default postgres://postgres@127.0.0.1:5432/postgres)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import pg from 'pg';
import * as prettier from 'prettier';
import { runProcess, startServerProcess, type ServerProcess } from '../test/support/server-process.js';
import {
  readBack,
  type FixtureExpectation,
  type FixtureFacts,
  type FixtureSide,
} from '../test/support/upgrade-read-back.js';

/** The chosen commits on main, oldest first; README.md in the fixtures' folder says why these. */
const LEVELS = ['9b093fb', '365a650', 'bc45557'];

const ROOT = path.resolve(import.meta.dirname, '..');
const OUT = path.join(ROOT, 'test/fixtures/upgrade');
const ADMIN_URL = process.env.PGADMIN_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
/** Fixed, so that the test can call the admin API of the server it starts on a fixture. */
const ADMIN_KEY = 'upgrade-fixture-admin-key-0123456789abcdef';

const git = (...args: string[]): string => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();

function migrationsOf(commit: string): string[] {
  return git('ls-tree', '--name-only', `${commit}:src/db/migrations`)
    .split('\n')
    .map((file) => file.replace(/\.ts$/, ''))
    .sort();
}

/** Whether every dependency the commit locked is the version installed here. */
function sameDependencies(tree: string): boolean {
  const lock = JSON.parse(fs.readFileSync(path.join(tree, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; link?: boolean; optional?: boolean }>;
  };
  return Object.entries(lock.packages).every(([key, entry]) => {
    // Only the top level: nested copies come with their parent.
    if (!/^node_modules\/(@[^/]+\/)?[^/]+$/.test(key) || entry.link === true) return true;
    const installed = path.join(ROOT, key, 'package.json');
    // Optional packages are another platform's binaries, installed only there.
    if (!fs.existsSync(installed)) return entry.optional === true;
    return (JSON.parse(fs.readFileSync(installed, 'utf8')) as { version: string }).version === entry.version;
  });
}

/**
 * The commit's tree in `dir` (git archive: no worktree registered in the repository), with today's
 * node_modules linked entry by entry when the commit locked the same versions, else its own
 * `npm ci`. The workspace's client links to the commit's own copy, whose source it exports.
 */
function materialise(commit: string, dir: string): void {
  execFileSync('sh', ['-c', `git archive ${commit} | tar -x -C "${dir}"`], { cwd: ROOT });
  if (!sameDependencies(dir)) {
    console.log(`  ${commit}: dependencies differ from today's; npm ci`);
    execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], {
      cwd: dir,
      stdio: 'inherit',
    });
    return;
  }
  const modules = path.join(dir, 'node_modules');
  fs.mkdirSync(modules);
  for (const entry of fs.readdirSync(path.join(ROOT, 'node_modules'))) {
    if (entry === '@keyward') continue;
    fs.symlinkSync(path.join(ROOT, 'node_modules', entry), path.join(modules, entry));
  }
  fs.mkdirSync(path.join(modules, '@keyward'));
  fs.symlinkSync(path.join(dir, 'packages/client'), path.join(modules, '@keyward/client'));
}

async function adminQuery(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** Runs the old version on one database, loads its data and reads it back through its APIs. */
async function loadOldVersion(tree: string, env: Record<string, string>, work: string): Promise<FixtureSide> {
  const bin = path.join(tree, 'bin/keyward.js');
  const server = await startServerProcess({ ...env, KEYWARD_ADMIN_KEY: ADMIN_KEY }, bin);
  try {
    const cliEnv = { ...env, KEYWARD_URL: server.url, KEYWARD_ADMIN_KEY: ADMIN_KEY };
    const demo = await runProcess(process.execPath, [bin, 'demo', '--json'], cliEnv);
    if (demo.code !== 0) throw new Error(`keyward demo failed:\n${demo.stderr}`);
    const facts = JSON.parse(demo.stdout) as FixtureFacts & { runtime: { online: string } };
    const lock = /LOCK=(\S+)/.exec(facts.runtime.online)?.[1];
    if (lock === undefined) throw new Error(`no lock in ${facts.runtime.online}`);
    // The version's own runtime example: seats checked out, heartbeats, an offline lease.
    const runtime = await runProcess(
      process.execPath,
      [
        path.join(tree, 'node_modules/tsx/dist/cli.mjs'),
        path.join(tree, 'examples/runtime/run.ts'),
        'online',
      ],
      {
        KEYWARD_URL: server.url,
        KEYWARD_APP_KEY: facts.app.appKey,
        KEYWARD_APP_SECRET: facts.app.appSecret,
        LOCK: lock,
        STATE_DIR: path.join(work, 'runtime-state'),
      },
    );
    if (runtime.code !== 0) throw new Error(`runtime example failed:\n${runtime.stdout}\n${runtime.stderr}`);
    const kept: FixtureFacts = {
      app: facts.app,
      enterprise: facts.enterprise,
      admin: facts.admin,
      assets: facts.assets.map(({ assetNum, licenseOrderId, assignedTo }) => ({
        assetNum,
        licenseOrderId,
        assignedTo,
      })),
      members: facts.members.map(({ memberGlobalId, account, assetNums }) => ({
        memberGlobalId,
        account,
        assetNums,
      })),
    };
    const side = { facts: kept, readBack: await readBack(server.url, ADMIN_KEY, kept) };
    await stopCleanly(server);
    return side;
  } catch (error) {
    await server.stop('SIGKILL');
    throw error;
  }
}

/** A fixture is made from a server that shut down cleanly: no recovery left for the next start. */
async function stopCleanly(server: ServerProcess): Promise<void> {
  const code = await server.stop();
  if (code !== 0) throw new Error(`server stopped with ${code}:\n${server.output()}`);
}

/**
 * The data directory as a tar compressed by brotli, which Node.js reads without any tool: a third
 * of gzip's size here, as most of a cluster is catalog pages and a WAL segment much alike.
 */
function archiveDataDir(dataDir: string): Buffer {
  const tar = execFileSync('tar', ['-cf', '-', '--exclude=keyward.lock', '-C', dataDir, '.'], {
    maxBuffer: 1 << 30,
  });
  return brotliCompressSync(tar, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: tar.length,
    },
  });
}

/** pg_dump's plain SQL, without what only psql or a newer server understands. */
function dumpDatabase(url: string): Buffer {
  const dump = spawnSync('pg_dump', ['--inserts', '--no-owner', '--no-privileges', url], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (dump.status !== 0) throw new Error(`pg_dump failed: ${dump.stderr}`);
  const sql = dump.stdout
    .split('\n')
    // \restrict and \unrestrict (pg_dump since 2025's minor releases) are psql commands.
    .filter((line) => !line.startsWith('\\'))
    // Dumps of PostgreSQL 17 set a setting that older servers lack.
    .filter((line) => !line.startsWith('SET transaction_timeout'))
    .join('\n');
  return gzipSync(sql, { level: 9 });
}

async function makeFixture(commit: string): Promise<void> {
  const full = git('rev-parse', commit);
  const migrations = migrationsOf(full);
  const level = migrations.at(-1) ?? '';
  const work = fs.mkdtempSync(path.join(os.tmpdir(), `keyward-fixture-${commit}-`));
  const database = `keyward_fixture_${process.pid}_${commit}`;
  console.log(`${commit} (${level}): building in ${work}`);
  try {
    const tree = path.join(work, 'tree');
    fs.mkdirSync(tree);
    materialise(full, tree);
    const out = path.join(OUT, level);
    fs.mkdirSync(out, { recursive: true });

    const dataDir = path.join(work, 'data');
    const embedded = await loadOldVersion(tree, { DATA_DIR: dataDir }, work);
    fs.writeFileSync(path.join(out, 'data-dir.tar.br'), archiveDataDir(dataDir));

    await adminQuery(`create database ${database}`);
    const url = databaseUrl(database);
    const postgres = await loadOldVersion(
      tree,
      { DATABASE_URL: url, DATA_DIR: path.join(work, 'data-pg') },
      work,
    );
    fs.writeFileSync(path.join(out, 'postgres.sql.gz'), dumpDatabase(url));

    const expectation: FixtureExpectation = {
      commit: full,
      date: git('show', '-s', '--format=%cI', full),
      level,
      migrations,
      adminKey: ADMIN_KEY,
      embedded,
      postgres,
    };
    // In the repository's style, as `npm run check` wants every JSON file.
    const file = path.join(out, 'expected.json');
    const options = { ...(await prettier.resolveConfig(file)), filepath: file };
    fs.writeFileSync(file, await prettier.format(JSON.stringify(expectation), options));
    for (const file of fs.readdirSync(out)) {
      console.log(`  ${level}/${file}: ${fs.statSync(path.join(out, file)).size} bytes`);
    }
  } finally {
    await adminQuery(`drop database if exists ${database} with (force)`);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

const chosen = process.argv.slice(2);
for (const commit of chosen.length > 0 ? chosen : LEVELS) await makeFixture(commit);
