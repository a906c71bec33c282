import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/db/client.js';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import {
  adminCall,
  appToken,
  call,
  freshId,
  okData,
  postBatch,
  purchaseBatch,
  type LiveApp,
} from './support/live-api.js';
import { onDatabase } from './support/order-state.js';

// Webhook deliveries from real `keyward serve` processes: a kill -9 while deliveries are in flight
// and a restart on the same database (every event arrives at least once, and the receiver can
// tell a repeat by its webhook-id); on PostgreSQL, two instances sending from one outbox.
// On PostgreSQL, a database of its own on the suite's server: the workers of these servers claim
// every due delivery they see, and would otherwise send those of other test files.
const suiteUrl = testDatabaseUrl();
const ownDatabase = `keyward_webhooks_${randomBytes(4).toString('hex')}`;
const url = suiteUrl === undefined ? undefined : suiteUrl.replace(/\/[^/?]*(\?|$)/, `/${ownDatabase}$1`);

async function onSuiteServer(statement: string): Promise<void> {
  if (suiteUrl === undefined) return;
  const handle = await openPostgres(suiteUrl);
  try {
    await sql.raw(statement).execute(handle.db);
  } finally {
    await handle.close();
  }
}
const ADMIN_KEY = randomBytes(16).toString('hex');
const WEBHOOK_ENV = {
  WEBHOOK_WORKER: '1',
  WEBHOOK_ALLOW_HTTP: '1',
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
};

async function until(condition: () => boolean | Promise<boolean>, what: string, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function webhookApp(base: string): Promise<LiveApp> {
  const channel = freshId('CH');
  const app = await adminCall<{ appKey: string; appSecret: string }>(base, ADMIN_KEY, 'POST', '/apps', {
    name: 'webhooks',
    scopes: ['auth_order', 'auth_webhooks'],
    channels: [channel],
  });
  return { appKey: app.appKey, appSecret: app.appSecret, channel };
}

/** The ids the receiver got, each verified against the secret, with how often each came. */
function verifiedIds(receiver: Receiver, secret: string, route: string): Map<string, number> {
  const seen = new Map<string, number>();
  const verifier = new Webhook(secret);
  for (const hit of receiver.received.filter((r) => r.path === route)) {
    const event = verifier.verify(hit.body, {
      'webhook-id': String(hit.headers['webhook-id']),
      'webhook-timestamp': String(hit.headers['webhook-timestamp']),
      'webhook-signature': String(hit.headers['webhook-signature']),
    }) as { id: string };
    expect(event.id).toBe(hit.headers['webhook-id']);
    seen.set(event.id, (seen.get(event.id) ?? 0) + 1);
  }
  return seen;
}

let receiver: Receiver;
beforeAll(async () => {
  await onSuiteServer(`create database ${ownDatabase}`);
  receiver = await startReceiver();
  // Slow enough that a batch of deliveries is always in flight.
  receiver.on('/slow', (_req, res) => void setTimeout(() => res.writeHead(200).end(), 150));
});
afterAll(async () => {
  await receiver.close();
  await onSuiteServer(`drop database if exists ${ownDatabase} with (force)`);
});

describe('a server killed while delivering', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-webhooks-'));
  const env = { DATABASE_URL: url ?? '', DATA_DIR: dataDir, KEYWARD_ADMIN_KEY: ADMIN_KEY, ...WEBHOOK_ENV };
  let server: ServerProcess | undefined;

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('delivers every event at least once after a restart, each with its one webhook-id', async () => {
    server = await startServerProcess(env);
    const app = await webhookApp(server.url);
    const token = await appToken(server.url, app);
    const endpoint = okData(
      await call<{ id: string; secret: string }>(server.url, 'POST', '/v1/webhooks/endpoints', {
        headers: { authorization: `Bearer ${token}` },
        body: { url: `${receiver.url}/slow`, eventTypes: ['order.accepted', 'order.completed'] },
      }),
    );
    const BATCHES = 24;
    for (let i = 0; i < BATCHES; i += 1) {
      okData(await postBatch(server.url, app, token, purchaseBatch(app, { syncMode: 'async' }).body));
    }
    // Each async batch of one order makes two events: accepted now, completed by the order worker.
    const expected = 2 * BATCHES;
    await until(() => verifiedIds(receiver, endpoint.secret, '/slow').size >= 4, 'the first deliveries');
    await server.stop('SIGKILL');
    server = undefined;
    const beforeRestart = verifiedIds(receiver, endpoint.secret, '/slow').size;
    expect(beforeRestart).toBeLessThan(expected);

    server = await startServerProcess(env);
    await until(() => verifiedIds(receiver, endpoint.secret, '/slow').size >= expected, 'every event');
    // What the killed process had in flight reached the receiver but was never marked: it is sent
    // again once its claim expires (2 × WEBHOOK_TIMEOUT_MS + 5 s). Quiet for longer than that,
    // nothing is left to send.
    const hits = () => receiver.received.filter((r) => r.path === '/slow').length;
    let last = { count: hits(), at: Date.now() };
    await until(() => {
      if (hits() !== last.count) last = { count: hits(), at: Date.now() };
      return Date.now() - last.at > 11_000;
    }, 'the repeats of what was in flight');
    await server.stop();
    server = undefined;

    const seen = verifiedIds(receiver, endpoint.secret, '/slow');
    const database = url === undefined ? { dataDir } : { url };
    const rows = await onDatabase(database, (db) =>
      db
        .selectFrom('webhook_deliveries')
        .select(['event_id', 'status'])
        .where('endpoint_id', '=', endpoint.id)
        .execute(),
    );
    // Exactly the outbox's events arrived, all recorded delivered; a repeat is the same id.
    expect(rows).toHaveLength(expected);
    expect(new Set(rows.map((r) => r.event_id))).toEqual(new Set(seen.keys()));
    expect(rows.every((r) => r.status === 'delivered')).toBe(true);
    const repeats = [...seen.values()].filter((n) => n > 1).length;
    console.info(
      `webhooks after kill -9: ${seen.size} events, ${beforeRestart} before the kill, ${repeats} delivered more than once`,
    );
  }, 240_000);
});

describe.runIf(url !== undefined)('two instances on one PostgreSQL', () => {
  let a: ServerProcess;
  let b: ServerProcess;

  beforeAll(async () => {
    const env = {
      DATABASE_URL: url ?? '',
      KEYWARD_ADMIN_KEY: ADMIN_KEY,
      DATA_DIR: '/tmp/keyward-reliability',
      ...WEBHOOK_ENV,
    };
    [a, b] = await Promise.all([startServerProcess(env), startServerProcess(env)]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
  });

  it('deliver each event once: their workers never send the same delivery', async () => {
    receiver.on('/twice', (_req, res) => void setTimeout(() => res.writeHead(200).end(), 20));
    const app = await webhookApp(a.url);
    const token = await appToken(a.url, app);
    const endpoint = okData(
      await call<{ id: string; secret: string }>(a.url, 'POST', '/v1/webhooks/endpoints', {
        headers: { authorization: `Bearer ${token}` },
        body: { url: `${receiver.url}/twice`, eventTypes: ['order.accepted'] },
      }),
    );
    const BATCHES = 40;
    await Promise.all(
      Array.from({ length: BATCHES }, (_, i) =>
        postBatch(i % 2 === 0 ? a.url : b.url, app, token, purchaseBatch(app).body).then(okData),
      ),
    );
    await until(() => verifiedIds(receiver, endpoint.secret, '/twice').size >= BATCHES, 'every event');
    // A moment more for any second send to land.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const seen = verifiedIds(receiver, endpoint.secret, '/twice');
    expect(seen.size).toBe(BATCHES);
    expect([...seen.values()].every((n) => n === 1)).toBe(true);
  }, 180_000);
});
