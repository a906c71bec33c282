import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
  type LiveApp,
} from './support/live-api.js';
import {
  batchStates,
  lockOwner,
  onDatabase,
  type BatchState,
  type SentBatch,
} from './support/order-state.js';

// `kill -9` of a real server in the middle of work, then a restart on the same database: on the
// embedded database the same DATA_DIR, whose lock the dead process left behind. Runs on whichever
// database the suite runs on.
const url = testDatabaseUrl();
const ADMIN_KEY = randomBytes(16).toString('hex');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-crash-'));
const env = { DATABASE_URL: url ?? '', DATA_DIR: dataDir, KEYWARD_ADMIN_KEY: ADMIN_KEY };
const database = url === undefined ? { dataDir } : { url };
let server: ServerProcess | undefined;

const start = async () => (server = await startServerProcess(env));
const running = (): ServerProcess => {
  if (!server) throw new Error('no server');
  return server;
};
async function kill(): Promise<number> {
  const pid = running().child.pid as number;
  await running().stop('SIGKILL');
  server = undefined;
  return pid;
}
/** The database as the last server left it; the embedded one is read with no server on it. */
async function inspect(sent: SentBatch[]): Promise<BatchState[]> {
  if (url !== undefined) return onDatabase(database, (db) => batchStates(db, sent));
  const wasRunning = server !== undefined;
  if (server) await running().stop();
  server = undefined;
  const states = await onDatabase(database, (db) => batchStates(db, sent));
  if (wasRunning) await start();
  return states;
}

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const ORDERS = 4;
const ASSETS = 3;
/** A batch all there: its record, every order, every lock and both products of each. */
const whole = (orders = ORDERS, assets = ASSETS): BatchState => ({
  batches: 1,
  orders,
  completed: orders,
  assets: orders * assets,
  products: orders * assets * 2,
});
const absent: BatchState = { batches: 0, orders: 0, completed: 0, assets: 0, products: 0 };

let app: LiveApp;
let token: string;

beforeAll(async () => {
  await start();
  app = await createApp(running().url, ADMIN_KEY);
  token = await appToken(running().url, app);
});
afterAll(async () => {
  if (server) await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

// Each test kills and restarts a real server inside itself: a loaded 2-core machine needs time.
describe('kill -9 and restart', { timeout: 120_000 }, () => {
  it('keeps every sync batch whole or absent, and the client’s retries apply each exactly once', async () => {
    const sent = Array.from({ length: 24 }, () => purchaseBatch(app, { orders: ORDERS, assets: ASSETS }));
    const answered = new Map<number, unknown>();
    let next = 0;
    let dead = false;
    // Three clients stream the batches until the server dies under them.
    const client = async () => {
      while (next < sent.length && !dead) {
        const i = next;
        next += 1;
        try {
          const answer = await postBatch(running().url, app, token, sent[i]?.body);
          if (answer.code === 0) answered.set(i, answer.data);
        } catch {
          // the connection died with the server: this batch's fate is unknown to the client
        }
      }
    };
    const stream = Promise.all([client(), client(), client()]);
    await until(() => answered.size >= 5, 'the first answers');
    dead = true;
    const pid = await kill();
    await stream;
    if (url === undefined) expect(lockOwner(dataDir)).toBe(pid);

    // The restart takes over the dead process's lock and serves the same data.
    await start();
    const afterCrash = await inspect(sent);
    afterCrash.forEach((state, i) => {
      if (answered.has(i)) expect(state, `batch ${i}`).toEqual(whole());
      else expect([whole(), absent], `batch ${i}`).toContainEqual(state);
    });
    expect(afterCrash.filter((s) => s.batches === 0).length).toBeGreaterThan(0);

    // The client retries every batch, fresh nonce, same body: each applies exactly once.
    for (const [i, batch] of sent.entries()) {
      const retry = await postBatch(running().url, app, token, batch.body);
      expect(retry.code, retry.body).toBe(0);
      if (answered.has(i)) expect(retry.data).toEqual(answered.get(i));
    }
    for (const state of await inspect(sent)) expect(state).toEqual(whole());
  });

  it('applies async batches exactly once when their worker is killed mid-way', async () => {
    // Killed as soon as the last batch is accepted, while the worker is busy with the queue.
    const [orders, assets] = [8, 5];
    const sent = Array.from({ length: 20 }, () => purchaseBatch(app, { orders, assets, syncMode: 'async' }));
    const answers = await Promise.all(sent.map((batch) => postBatch(running().url, app, token, batch.body)));
    const firstOrders = answers.map((answer) => {
      expect(answer.code, answer.body).toBe(0);
      return (answer.data[0] as { licenseOrderId: string }).licenseOrderId;
    });
    await kill();
    const atKill = await onDatabase(database, (db) => batchStates(db, sent));
    expect(atKill.filter((s) => s.completed === 0).length, 'batches left for the restart').toBeGreaterThan(0);
    // Each batch applied whole, or stored and waiting with nothing of it applied.
    const waiting: BatchState = { ...absent, batches: 1, orders };
    for (const state of atKill) expect([waiting, whole(orders, assets)]).toContainEqual(state);

    await start();
    const statusOf = async (licenseOrderId: string) =>
      (
        await call<{ status: string }>(running().url, 'GET', `${ORDER}/licenseOrder/${licenseOrderId}`, {
          headers: orderHeaders(token),
        })
      ).data.status;
    await until(
      async () => (await Promise.all(firstOrders.map(statusOf))).every((s) => s === 'completed'),
      'the queue to drain after the restart',
    );
    for (const state of await inspect(sent)) expect(state).toEqual(whole(orders, assets));
  });
});
