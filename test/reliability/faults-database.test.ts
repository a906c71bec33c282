import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres, type DatabaseHandle } from '../../src/db/client.js';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  appToken,
  call,
  createApp,
  ORDER,
  orderHeaders,
  postBatch,
  purchaseBatch,
  type Answer,
  type LiveApp,
} from './support/live-api.js';
import { batchStates, type SentBatch } from './support/order-state.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

// A server whose PostgreSQL misbehaves: connections killed under load, and the database gone and
// back. PostgreSQL only; the machine's PostgreSQL itself is never stopped.
const url = testDatabaseUrl();
const ADMIN_KEY = randomBytes(16).toString('hex');
let database: DatabaseHandle;

beforeAll(async () => {
  if (url !== undefined) database = await openPostgres(url);
});
afterAll(async () => {
  if (url !== undefined) await database.close();
});

const shellnums = (base: string, token: string, timeoutMs?: number) =>
  call(base, 'POST', `${ORDER}/shellnums`, {
    headers: orderHeaders(token),
    body: { size: 1 },
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  });

/** Polls until a call succeeds, then requires `n` more in a row to succeed. */
async function recovers(base: string, token: string, n = 20): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await shellnums(base, token).catch(() => undefined);
    if (answer?.code === 0) break;
    if (Date.now() > deadline) throw new Error(`no recovery: ${answer?.body ?? 'no answer'}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (let i = 0; i < n; i += 1) expect((await shellnums(base, token)).code).toBe(0);
}

describe.runIf(url !== undefined)('PostgreSQL connections killed under load', () => {
  const appName = `keyward-fault-${randomBytes(4).toString('hex')}`;
  let server: ServerProcess;
  let app: LiveApp;
  let token: string;

  beforeAll(async () => {
    // node-postgres names its connections after PGAPPNAME: the test kills exactly this server's.
    server = await startServerProcess({
      DATABASE_URL: url as string,
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
      DATA_DIR: '/tmp/keyward-reliability',
      PGAPPNAME: appName,
    });
    app = await createApp(server.url, ADMIN_KEY);
    token = await appToken(server.url, app);
  });
  afterAll(async () => server.stop());

  it('stays up, answers the affected calls "500", and serves the next calls', async () => {
    const answers: Answer[] = [];
    const failures: unknown[] = [];
    const sent: SentBatch[] = [];
    let loading = true;
    const client = async (i: number) => {
      while (loading) {
        try {
          if (i % 2 === 0) {
            const batch = purchaseBatch(app, { orders: 3, assets: 2 });
            sent.push(batch);
            answers.push(await postBatch(server.url, app, token, batch.body));
          } else {
            answers.push(await shellnums(server.url, token));
          }
        } catch (error) {
          failures.push(error);
        }
      }
    };
    const load = Promise.all([0, 1, 2, 3].map(client));
    const killed = () => answers.filter((a) => a.code === '500').length;
    for (let round = 0; round < 100 && (round < 5 || killed() === 0); round += 1) {
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${appName}`.execute(
        database.db,
      );
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    loading = false;
    await load;

    expect(failures.length, `calls the server did not answer:\n${server.output().slice(-1500)}`).toBe(0);
    expect(server.child.exitCode, server.output().slice(-2000)).toBeNull();
    expect(killed(), 'calls cut off by a killed connection').toBeGreaterThan(0);
    for (const answer of answers) {
      if (answer.code !== 0) expect([answer.status, answer.code], answer.body).toEqual([299, '500']);
    }
    await recovers(server.url, token);
    // A batch cut off by its connection was rolled back whole: its retry applies it once.
    for (const batch of sent) expect((await postBatch(server.url, app, token, batch.body)).code).toBe(0);
    for (const state of await batchStates(database.db, sent)) {
      expect(state).toEqual({ batches: 1, orders: 3, completed: 3, assets: 6, products: 12 });
    }
  });
});

describe.runIf(url !== undefined)('PostgreSQL unreachable', () => {
  let proxy: TcpProxy;
  let server: ServerProcess;
  let token: string;

  beforeAll(async () => {
    const target = new URL(url as string);
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
    target.host = `127.0.0.1:${proxy.port}`;
    server = await startServerProcess({
      DATABASE_URL: target.toString(),
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
      DATA_DIR: '/tmp/keyward-reliability',
    });
    token = await appToken(server.url, await createApp(server.url, ADMIN_KEY));
  });
  afterAll(async () => {
    await server.stop();
    await proxy.close().catch(() => undefined);
  });

  it('fails /readyz and answers "500" within 5 s while it is gone, and serves again when it is back', async () => {
    expect((await shellnums(server.url, token)).code).toBe(0);
    await proxy.close();

    // A hung call would be aborted at 5 s and fail the test.
    const ready = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(5_000) });
    expect(ready.status).toBe(503);
    for (let i = 0; i < 3; i += 1) {
      const answer = await shellnums(server.url, token, 5_000);
      expect([answer.status, answer.code], answer.body).toEqual([299, '500']);
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

    await proxy.reopen();
    await recovers(server.url, token);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

describe.runIf(url !== undefined)(
  'PostgreSQL silent (a partition: connections open, nothing answers)',
  () => {
    let proxy: TcpProxy;
    let server: ServerProcess;
    let token: string;

    beforeAll(async () => {
      const target = new URL(url as string);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      target.host = `127.0.0.1:${proxy.port}`;
      server = await startServerProcess({
        DATABASE_URL: target.toString(),
        DATABASE_SILENCE_MS: '2000',
        KEYWARD_ADMIN_KEY: ADMIN_KEY,
        DATA_DIR: '/tmp/keyward-reliability',
      });
      token = await appToken(server.url, await createApp(server.url, ADMIN_KEY));
    });
    afterAll(async () => {
      proxy.speak();
      await server.stop();
      await proxy.close().catch(() => undefined);
    });

    it('fails /readyz and answers "500" once DATABASE_SILENCE_MS has passed, and serves again when it answers', async () => {
      expect((await shellnums(server.url, token)).code).toBe(0);
      proxy.silence();

      // A call waiting on a silent database is cut within the 2 s bound; the guard, well past it, only
      // keeps a hung call from hanging the test (pg's own query_timeout held calls 20 s).
      const ready = await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(10_000) });
      expect(ready.status).toBe(503);
      for (let i = 0; i < 3; i += 1) {
        const answer = await shellnums(server.url, token, 10_000);
        expect([answer.status, answer.code], answer.body).toEqual([299, '500']);
      }
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);

      proxy.speak();
      await recovers(server.url, token);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    });
  },
);
