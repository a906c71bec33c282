/** Sizes, durations and concurrency of `npm run bench`, in one place. */

/** BENCH_TENANTS and BENCH_SECONDS shrink a run while working on the bench itself. */
function envNumber(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}

/** Every seeded enterprise has this shape; sizes differ only in how many there are. */
export const TENANT = {
  /** The administrator and 99 members: member op 5 at pageSize 10 has 10 pages. */
  members: 100,
  assets: 500,
  /** Members 1..99 each hold the asset with the same index. */
  assigned: 99,
  /** One product instance per asset, so order writes meet a populated table. */
  productsPerAsset: 1,
} as const;

/** 10,000 assets (R3) and 1,000,000 assets with 200,000 members. */
export const SMALL_TENANTS = 20;
export const LARGE_TENANTS = envNumber('BENCH_TENANTS', 2000);
/** Tenants inserted per statement while growing to the large size. */
export const SEED_CHUNK = 100;

/** Every fifth asset is a refillable lock, the kind order ops 6–7 switch. */
export const LOCKABLE_EVERY = 5;

export const CHANNEL = 'BENCH';
/** The enterprise every member-center scenario acts in (its administrator's token). */
export const TARGET_TENANT = 1;
export const ADMIN_PASSWORD = 'Bench-pass1';

export interface Timing {
  warmupSeconds: number;
  seconds: number;
}

export const TIMING: Timing = { warmupSeconds: 3, seconds: envNumber('BENCH_SECONDS', 10) };

/**
 * Read throughput is compared where it stops growing. R1 is there at 10 connections already;
 * Keyward's reads wait on two dependent round trips (the gate, then the query), so they need more
 * calls in flight to keep the CPU busy. Both are measured at 50, and at 10 for comparison.
 */
export const READ_CONNECTIONS = 50;
export const FEW_READ_CONNECTIONS = 10;
export const BATCH_CONNECTIONS = 4;

export const BATCH_SHAPE = { orders: 50, assetsPerOrder: 4, productsPerAsset: 5 } as const;
export const LOCK_CALLS = { one: { warmup: 100, measured: 600 }, many: { warmup: 4, measured: 30 } } as const;
export const MEMBERS_PER_ADD = 100;

/** Running copies of the runtime's heartbeat scenario, each with its own lease. */
export const RUNTIME_COPIES = 1000;

/**
 * Monday 9:00: `machines` copies of a program start within `seconds` against `licenses` locks of
 * `seats` seats each (bench/checkout-storm.ts).
 */
export const CHECKOUT_STORM = { licenses: 1000, seats: 3, machines: 5000, seconds: 60 } as const;

/**
 * One busy license (bench/busy-license.ts): check-outs of one `seats`-seat license by `clients`
 * at once, `round` a measured round, with none, then `held` leases already live on it; the same
 * round on one license and spread over `spread` licenses; `storm` check-outs of one license while
 * `beatClients` heartbeat `beatLeases` leases of other licenses (and for `quietSeconds` before it,
 * with no check-out running).
 */
/** The relay: its machines, check-out rounds, and seconds of heartbeats (bench/relay.ts). */
export const RELAY = { machines: 100, rounds: 5, heartbeatSeconds: 20, p99Ms: 20 } as const;

export const BUSY_LICENSE = {
  seats: 10_000,
  clients: 50,
  round: 1000,
  held: [3000, 7000],
  spread: 50,
  storm: 10_000,
  beatClients: 20,
  beatLeases: 200,
  quietSeconds: 10,
} as const;

/**
 * The fleet (bench/fleet.ts): `machines` running copies holding leases of `licenses` locks (seats
 * enough for all), each heartbeating at the interval the server tells it, `heartbeatSeconds`: the
 * server runs with RUNTIME_LEASE_SECONDS five times that, as the default lease of 300 s is to its
 * 60 s heartbeat, so a heartbeat meets its lease as it would at the default, only more often.
 * 50,000 machines every 30 s are 1,667 heartbeats a second. `seconds` at that steady rate
 * (BENCH_FLEET_SECONDS and BENCH_FLEET_MACHINES shrink a run while working on the bench), then the
 * 9:00 wave: `wave.machines` new machines check out one license of as many seats, `wave.clients`
 * at once. `fillClients` check the fleet out first, the first `costedCheckOuts` with nothing else
 * running (what a check-out costs); `beatSockets` connections carry its heartbeats:
 * enough that they wait at the server, as a fleet's do (each copy has a connection of its own),
 * not for a free connection in the load generator (with 100, p50 3.4 s at 1,667 a second).
 */
export const FLEET = {
  machines: envNumber('BENCH_FLEET_MACHINES', 50_000),
  licenses: 50,
  heartbeatSeconds: 30,
  seconds: envNumber('BENCH_FLEET_SECONDS', 300),
  fillClients: 50,
  costedCheckOuts: 5000,
  beatSockets: 800,
  wave: { machines: 5000, clients: 50 },
} as const;

/**
 * The webhooks scenario: async batchOrders of one order each, sent by as many callers at once as
 * the batchOrder scenario uses (a CRM's sync job). Each makes an order.accepted event at once and
 * an order.completed when the order worker has applied it, one batch at a time. `waitMs` bounds the
 * wait for the last order.completed after the last answer, `drainMs` the wait for the outbox to
 * empty after that (so late duplicates are counted too).
 */
export const WEBHOOKS = {
  orders: 1000,
  callers: BATCH_CONNECTIONS,
  waitMs: 180_000,
  drainMs: 30_000,
} as const;

/**
 * The stalled-tenant webhooks scenario: one app's endpoints (the most an app may have) that never
 * answer, `events` events queued to each; meanwhile another app sends `orders` async orders, one
 * every `gapMs`, and the lag of their events is measured.
 */
export const STALLED_TENANT = { endpoints: 20, events: 100, orders: 30, gapMs: 250 } as const;

/**
 * Names for `npm run bench -- --only a,b`: each runs its scenarios and the references they are
 * compared with. busy: check-outs of one busy license (bench/busy-license.ts); fleet: 50,000
 * machines heartbeating, then a 9:00 wave of check-outs, with each call's CPU, WAL and rows
 * (bench/fleet.ts); reads-at-10: op 3 and op 5 at 10 connections; big: member lists at 1M assets vs
 * 10k; embedded: op 3 and op 5 on the embedded database.
 */
export const SCENARIOS = [
  'op3',
  'op5',
  'heartbeat',
  'storm',
  'busy',
  'fleet',
  'relay',
  'reads-at-10',
  'big',
  'op6',
  'op9',
  'batch',
  'op1',
  'console',
  'usage',
  'webhooks',
  'webhooks-stalled',
  'rss',
  'embedded',
] as const;
export type Scenario = (typeof SCENARIOS)[number];
