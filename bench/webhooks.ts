import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { Webhook } from 'standardwebhooks';
import type { Db } from '../src/db/client.js';
import { freshNonce, percentile } from './load.js';
import { scrapeMetrics } from './processes.js';
import { productOf } from './requests.js';
import { customerId } from './seed.js';
import { CHANNEL, SMALL_TENANTS, STALLED_TENANT, WEBHOOKS } from './settings.js';

// The webhooks scenario (issue 19): async orders sent as a CRM sends them, their events delivered
// by the server's own worker to a receiver here that verifies every signature the way an
// integrator would (the `standardwebhooks` package) and notes when each event arrived.

const ORDER = '/order/api/order/v1';

export interface WebhookOutcome {
  /** Deliveries whose signature verified, by event id, first arrival only. */
  events: number;
  byType: Record<string, number>;
  /** order.completed events verified, of WEBHOOKS.orders. */
  completed: number;
  duplicates: number;
  badSignatures: number;
  /** From the event's own time (the transaction that made it) to its verified arrival, ms. */
  lag: { p50: number; p99: number; max: number };
  /** Verified events per second, from the first arrival to the last. */
  eventsPerSecond: number;
  /** From the first order sent to the last order.completed arrived. */
  seconds: number;
}

interface Arrival {
  type: string;
  lagMs: number;
  at: number;
  licenseOrderId: string | null;
}

/** A local endpoint: verifies each delivery, answers 204 (400 to a bad signature, as a receiver should). */
class Receiver {
  readonly arrivals = new Map<string, Arrival>();
  duplicates = 0;
  badSignatures = 0;
  private verifier: Webhook | undefined;
  private held: { prefix: string; onHold: () => void } | undefined;
  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (this.held !== undefined && (req.url ?? '').startsWith(this.held.prefix)) {
        this.held.onHold();
        return; // never answered
      }
      res.writeHead(this.receive(req, Buffer.concat(chunks).toString('utf8'))).end();
    });
  });

  /** Requests under `prefix` are read and never answered: an endpoint that hangs. */
  hold(prefix: string, onHold: () => void): void {
    this.held = { prefix, onHold };
  }

  /** The endpoint's secret, known once it is registered (no event comes before). */
  trust(secret: string): void {
    this.verifier = new Webhook(secret);
  }

  private receive(req: http.IncomingMessage, body: string): number {
    const at = Date.now();
    let event: { id: string; type: string; timestamp: string; data: { licenseOrderId?: string } };
    try {
      if (this.verifier === undefined) throw new Error('no secret yet');
      event = this.verifier.verify(body, {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      }) as typeof event;
      if (event.id !== req.headers['webhook-id']) throw new Error('body and header name different events');
    } catch {
      this.badSignatures += 1;
      return 400;
    }
    if (this.arrivals.has(event.id)) {
      this.duplicates += 1;
      return 204;
    }
    this.arrivals.set(event.id, {
      type: event.type,
      lagMs: at - Date.parse(event.timestamp),
      at,
      licenseOrderId: event.data.licenseOrderId ?? null,
    });
    return 204;
  }

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.url}: HTTP ${response.status} ${text}`);
  const parsed = JSON.parse(text) as T & { code?: number };
  if (parsed.code !== undefined && parsed.code !== 0) throw new Error(`${response.url}: ${text}`);
  return parsed;
}

/** An app of the bench's channel (or `channel`) that sends orders and has webhooks, and its token. */
async function webhookApp(
  url: string,
  adminKey: string,
  channel = CHANNEL,
): Promise<{ appKey: string; token: string }> {
  const app = await json<{ appKey: string; appSecret: string }>(
    await fetch(`${url}/admin/apps`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        name: 'bench webhooks',
        scopes: ['auth_order', 'auth_webhooks'],
        channels: [channel],
      }),
    }),
  );
  const token = await json<{ access_token: string }>(
    await fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        client_id: app.appKey,
        client_secret: app.appSecret,
        grant_type: 'client_credentials',
      }),
    }),
  );
  return { appKey: app.appKey, token: token.access_token };
}

/** One async batchOrder of one new_buy order (one asset, two products): its license order id. */
async function sendOrder(url: string, app: { appKey: string; token: string }, n: number, tag: string) {
  const key = `${tag}-${n}`;
  const answer = await json<{ data: Array<{ licenseOrderId: string }> }>(
    await fetch(`${url}${ORDER}/licenseOrder/batchOrder?appKey=${app.appKey}&g_nonce=${freshNonce()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        channelCode: CHANNEL,
        channelOrderId: `wh-${key}`,
        syncMode: 'async',
        orderList: [
          {
            sequence: 1,
            customerId: customerId((n % SMALL_TENANTS) + 1),
            orderType: 'new_buy',
            licenseType: 'softkey',
            assets: [{ assetNos: [`WH-${key}`], products: [productOf(key, 0), productOf(key, 1)] }],
          },
        ],
      }),
    }),
  );
  const id = answer.data[0]?.licenseOrderId;
  if (id === undefined) throw new Error(`batchOrder ${key} answered no license order`);
  return id;
}

async function until(what: string, ms: number, done: () => boolean | Promise<boolean>): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!(await done())) {
    if (Date.now() > deadline) {
      console.warn(`[bench] webhooks: gave up waiting for ${what} after ${ms / 1000} s`);
      return false;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

async function backlog(url: string): Promise<number> {
  const text = await scrapeMetrics(url);
  const line = (state: string) =>
    text.split('\n').find((l) => l.startsWith(`keyward_webhook_backlog{state="${state}"}`)) ?? '';
  return Number(line('due').split(' ').pop() ?? NaN) + Number(line('waiting').split(' ').pop() ?? NaN);
}

/**
 * Registers an endpoint for every event type, sends WEBHOOKS.orders async orders from
 * WEBHOOKS.callers callers at once, and waits (bounded) for every order.completed to arrive
 * verified, then for the outbox to drain so late duplicates are counted too. The endpoint is
 * deleted at the end: the scenarios after this one send to no one.
 */
export async function runWebhooks(url: string, adminKey: string): Promise<WebhookOutcome> {
  const receiver = new Receiver();
  const receiverUrl = await receiver.listen();
  const app = await webhookApp(url, adminKey);
  const auth = { authorization: `Bearer ${app.token}`, 'content-type': 'application/json' };
  const endpoint = await json<{ data: { id: string; secret: string } }>(
    await fetch(`${url}/v1/webhooks/endpoints?g_nonce=${freshNonce()}`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ url: `${receiverUrl}/keyward` }),
    }),
  );
  receiver.trust(endpoint.data.secret);
  try {
    const tag = `${Date.now().toString(36)}${process.pid}`;
    const expected = new Set<string>();
    const began = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WEBHOOKS.callers }, async () => {
        while (next < WEBHOOKS.orders) {
          next += 1;
          expected.add(await sendOrder(url, app, next, tag));
        }
      }),
    );
    const completedIds = () =>
      new Set(
        [...receiver.arrivals.values()]
          .filter((a) => a.type === 'order.completed' && a.licenseOrderId !== null)
          .map((a) => a.licenseOrderId as string),
      );
    await until('every order.completed', WEBHOOKS.waitMs, () => {
      const seen = completedIds();
      return [...expected].every((id) => seen.has(id));
    });
    const lastCompleted = Math.max(
      began,
      ...[...receiver.arrivals.values()].filter((a) => a.type === 'order.completed').map((a) => a.at),
    );
    // Whatever is still queued (order.accepted stragglers, a retry) arrives before the counting.
    await until('the outbox to drain', WEBHOOKS.drainMs, async () => (await backlog(url)) === 0);

    const arrivals = [...receiver.arrivals.values()];
    const lags = arrivals.map((a) => a.lagMs).sort((a, b) => a - b);
    const times = arrivals.map((a) => a.at);
    const spanSeconds = times.length < 2 ? 0 : (Math.max(...times) - Math.min(...times)) / 1000;
    const byType: Record<string, number> = {};
    for (const a of arrivals) byType[a.type] = (byType[a.type] ?? 0) + 1;
    const seen = completedIds();
    return {
      events: arrivals.length,
      byType,
      completed: [...expected].filter((id) => seen.has(id)).length,
      duplicates: receiver.duplicates,
      badSignatures: receiver.badSignatures,
      lag: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) ?? NaN },
      eventsPerSecond: spanSeconds > 0 ? arrivals.length / spanSeconds : NaN,
      seconds: (lastCompleted - began) / 1000,
    };
  } finally {
    await fetch(`${url}/v1/webhooks/endpoints/${endpoint.data.id}?g_nonce=${freshNonce()}`, {
      method: 'DELETE',
      headers: { authorization: auth.authorization },
    });
    await receiver.close();
  }
}

export interface StalledOutcome {
  /** The other app's events verified, of `expected`. */
  events: number;
  expected: number;
  /** Their lag, from the event's own time to its verified arrival, ms. */
  lag: { p50: number; p99: number; max: number };
  /** Connections the stalled endpoints received while the other app's events went out. */
  stalledHits: number;
  /** The stalled tenant's deliveries still pending at the end, of its queued ones. */
  stalledPending: number;
  stalledQueued: number;
}

/** An endpoint registered through the API: its id and secret. */
async function register(url: string, token: string, target: string, eventTypes?: string[]) {
  const created = await json<{ data: { id: string; secret: string } }>(
    await fetch(`${url}/v1/webhooks/endpoints?g_nonce=${freshNonce()}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: target, ...(eventTypes === undefined ? {} : { eventTypes }) }),
    }),
  );
  return created.data;
}

async function unregister(url: string, token: string, id: string): Promise<void> {
  await fetch(`${url}/v1/webhooks/endpoints/${id}?g_nonce=${freshNonce()}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
  });
}

/**
 * One tenant stalling every tenant's webhooks, measured: tenant S has STALLED_TENANT.endpoints endpoints that accept the
 * connection and never answer (each attempt held to the server's WEBHOOK_TIMEOUT_MS, 15 s), with
 * STALLED_TENANT.events events queued to each, written into the outbox directly (a backlog, not
 * what is measured). Tenant F, an app of the bench's channel, then sends STALLED_TENANT.orders
 * async orders one every STALLED_TENANT.gapMs; the lag of their order.accepted and order.completed
 * events, from the event's time to its verified arrival, is the row. S's endpoints are deleted at
 * the end, its backlog with them.
 */
export async function runStalledTenant(url: string, adminKey: string, db: Db): Promise<StalledOutcome> {
  const receiver = new Receiver();
  let stalledHits = 0;
  const receiverUrl = await receiver.listen();
  // Stalled paths: the request is read and never answered; closing the receiver ends them.
  receiver.hold('/stalled/', () => void (stalledHits += 1));
  const stalled = await webhookApp(url, adminKey, `STALL${randomBytes(3).toString('hex').toUpperCase()}`);
  const fair = await webhookApp(url, adminKey);
  const stalledEndpoints: string[] = [];
  let fairEndpoint: { id: string; secret: string } | undefined;
  try {
    for (let i = 0; i < STALLED_TENANT.endpoints; i += 1) {
      stalledEndpoints.push((await register(url, stalled.token, `${receiverUrl}/stalled/${i}`)).id);
    }
    const { id: appId } = await db
      .selectFrom('apps')
      .select('id')
      .where('app_key', '=', stalled.appKey)
      .executeTakeFirstOrThrow();
    const prefix = `evt_stall_${randomBytes(4).toString('hex')}_`;
    await sql`
      insert into webhook_events (id, type, app_id, data)
      select ${prefix} || n, 'lease.denied', ${appId}, '{}'::jsonb
        from generate_series(1, ${STALLED_TENANT.events}::int) n
    `.execute(db);
    await sql`
      insert into webhook_deliveries (event_id, endpoint_id)
      select ${prefix} || n, ep
        from generate_series(1, ${STALLED_TENANT.events}::int) n, unnest(${stalledEndpoints}::text[]) ep
    `.execute(db);
    const stalledQueued = STALLED_TENANT.events * STALLED_TENANT.endpoints;
    // S's attempts have taken the worker's slots before F's first event.
    await until('the stalled endpoints to be tried', 10_000, () => stalledHits >= 8);

    fairEndpoint = await register(url, fair.token, `${receiverUrl}/keyward`, [
      'order.accepted',
      'order.completed',
    ]);
    receiver.trust(fairEndpoint.secret);
    const tag = `st${Date.now().toString(36)}${process.pid}`;
    for (let n = 1; n <= STALLED_TENANT.orders; n += 1) {
      const began = Date.now();
      await sendOrder(url, fair, n, tag);
      await new Promise((resolve) =>
        setTimeout(resolve, Math.max(0, STALLED_TENANT.gapMs - (Date.now() - began))),
      );
    }
    const expected = 2 * STALLED_TENANT.orders;
    await until('the other app’s events', 60_000, () => receiver.arrivals.size >= expected);
    const lags = [...receiver.arrivals.values()].map((a) => a.lagMs).sort((a, b) => a - b);
    const pending = await db
      .selectFrom('webhook_deliveries')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .where('endpoint_id', 'in', stalledEndpoints)
      .where('status', '=', 'pending')
      .executeTakeFirstOrThrow();
    return {
      events: receiver.arrivals.size,
      expected,
      lag: { p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags.at(-1) ?? NaN },
      stalledHits,
      stalledPending: Number(pending.n),
      stalledQueued,
    };
  } finally {
    for (const id of stalledEndpoints) await unregister(url, stalled.token, id);
    if (fairEndpoint !== undefined) await unregister(url, fair.token, fairEndpoint.id);
    await receiver.close();
  }
}
