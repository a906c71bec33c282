import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { DemoFacts } from '../../../src/cli/demo/load-demo.js';
import { testDatabaseUrl } from '../../support/database.js';
import {
  runCli,
  runProcess,
  startServerProcess,
  type ProcessResult,
  type ServerProcess,
} from '../../support/server-process.js';

export interface DemoServer {
  server: ServerProcess;
  /** What the CLI needs to find the server and pass its admin API. */
  cliEnv: Record<string, string>;
  stop(): Promise<void>;
}

async function onAdminDatabase(url: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** A database of a test server's own, and how to remove it. */
export interface FreshDatabase {
  /** DATA_DIR and DATABASE_URL for `keyward serve`. */
  env: { DATA_DIR: string; DATABASE_URL: string };
  remove(): Promise<void>;
}

/**
 * A fresh data directory, or on the PostgreSQL pass a fresh database next to the run's, so the
 * server's order worker never meets other files' batches.
 */
export async function freshDatabase(): Promise<FreshDatabase> {
  const runUrl = testDatabaseUrl();
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-demo-'));
  let databaseUrl = '';
  let dropDatabase = async () => {};
  if (runUrl !== undefined) {
    const name = `keyward_demo_${process.pid}_${randomBytes(4).toString('hex')}`;
    await onAdminDatabase(runUrl, `create database ${name}`);
    const url = new URL(runUrl);
    url.pathname = `/${name}`;
    databaseUrl = url.toString();
    dropDatabase = () => onAdminDatabase(runUrl, `drop database if exists ${name} with (force)`);
  }
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    async remove() {
      await dropDatabase();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A real `keyward serve` on a fresh database (see freshDatabase), with `env` added to its own. */
export async function startDemoServer(env: Record<string, string> = {}): Promise<DemoServer> {
  const database = await freshDatabase();
  const adminKey = randomBytes(16).toString('hex');
  const server = await startServerProcess({ ...database.env, KEYWARD_ADMIN_KEY: adminKey, ...env });
  return {
    server,
    cliEnv: { KEYWARD_URL: server.url, KEYWARD_ADMIN_KEY: adminKey },
    async stop() {
      await server.stop();
      await database.remove();
    },
  };
}

/** Runs `keyward demo --json`; it must succeed and print exactly one JSON object. */
export async function runDemoJson(live: DemoServer): Promise<DemoFacts> {
  const result = await runCli(['demo', '--json'], live.cliEnv);
  // A fault answers "500" with a request id: the server's log says what happened.
  expect(result.code, `${result.stderr}\nserver log:\n${live.server.output().slice(-4000)}`).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] ?? '') as DemoFacts;
}

/** Runs shell text with bash, as a reader pasting it would; stdout is what curl printed. */
export function runShell(script: string, env: Record<string, string> = {}): Promise<ProcessResult> {
  return runProcess('bash', ['-c', script], env);
}
