import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { testDatabaseUrl } from './database.js';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

async function onServer(serverUrl: string, statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * An empty database of the test's own on the suite's PostgreSQL server: for tests that migrate
 * from nothing, or restore a dump, which the suite's shared database must never see.
 */
export async function createScratchDatabase(prefix: string): Promise<ScratchDatabase> {
  const suite = testDatabaseUrl();
  if (suite === undefined) throw new Error('scratch databases exist only on PostgreSQL');
  const name = `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
  await onServer(suite, `create database ${name}`);
  const url = new URL(suite);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () => onServer(suite, `drop database if exists ${name} with (force)`),
  };
}
