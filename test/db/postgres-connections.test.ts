import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { DatabaseBusyError } from '../../src/db/busy.js';
import { databaseReadiness, openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { startTcpProxy, type TcpProxy } from '../reliability/support/tcp-proxy.js';
import { testDatabaseUrl } from '../support/database.js';

// The PostgreSQL pool's waits and the watchdog of a silent database (src/db/postgres-pool.ts,
// src/db/watchdog.ts). PostgreSQL only: the embedded database has no pool and no network.
const url = testDatabaseUrl();

const opened: DatabaseHandle[] = [];
const proxies: TcpProxy[] = [];
afterEach(async () => {
  for (const proxy of proxies) proxy.speak();
  await Promise.all(opened.splice(0).map((handle) => handle.close()));
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

async function open(
  options: { poolSize: number; poolWaitMs: number; silenceMs: number },
  through?: TcpProxy,
) {
  const target = new URL(url as string);
  if (through !== undefined) target.host = `127.0.0.1:${through.port}`;
  const handle = await openPostgres(target.toString(), options);
  opened.push(handle);
  return handle;
}

async function proxy(): Promise<TcpProxy> {
  const target = new URL(url as string);
  const started = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
  proxies.push(started);
  return started;
}

const selectOne = (handle: DatabaseHandle) => sql`select 1`.execute(handle.db);

describe.runIf(url !== undefined)('PostgreSQL connections', () => {
  it('fails a call that waited past the pool wait with DatabaseBusyError, and readiness still answers', async () => {
    const handle = await open({ poolSize: 1, poolWaitMs: 200, silenceMs: 5000 });
    let release: (() => void) | undefined;
    const held = handle.db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      await new Promise<void>((resolve) => (release = resolve));
    });
    await expect.poll(() => release !== undefined).toBe(true);
    const waited = await selectOne(handle).catch((error: unknown) => error);
    expect(waited).toBeInstanceOf(DatabaseBusyError);
    expect(await databaseReadiness(handle.db).answers()).toBe(true);
    release?.();
    await held;
    await selectOne(handle);
  });

  it('lets a statement run past the silence bound while the database answers', async () => {
    const handle = await open({ poolSize: 2, poolWaitMs: 1000, silenceMs: 1000 });
    const { rows } = await sql<{ done: number }>`select 1 as done from pg_sleep(2.5)`.execute(handle.db);
    expect(rows).toEqual([{ done: 1 }]);
  });

  it('cuts the calls a silent database leaves waiting, reports it not ready, and serves again when it answers', async () => {
    const through = await proxy();
    const handle = await open({ poolSize: 2, poolWaitMs: 5000, silenceMs: 1000 }, through);
    await selectOne(handle);
    expect(await databaseReadiness(handle.db).answers()).toBe(true);

    through.silence();
    // Without the watchdog this call would wait for the operating system to give the connection up.
    const cut = await selectOne(handle).catch((error: unknown) => error);
    expect(cut).toBeInstanceOf(Error);
    expect(cut).not.toBeInstanceOf(DatabaseBusyError);
    expect(await databaseReadiness(handle.db).answers()).toBe(false);
    // A new connection to the silent database is given up too.
    const fresh = await selectOne(handle).catch((error: unknown) => error);
    expect(fresh).toBeInstanceOf(Error);
    expect(fresh).not.toBeInstanceOf(DatabaseBusyError);

    through.speak();
    await expect.poll(() => databaseReadiness(handle.db).answers(), { timeout: 10_000 }).toBe(true);
    await selectOne(handle);
  });
});
