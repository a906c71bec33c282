import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import {
  addMembers,
  appToken,
  call,
  createApp,
  createEnterprise,
  ME,
  memberHeaders,
  ORDER,
  orderHeaders,
  postBatch,
  product,
  purchaseBatch,
  RUNTIME,
  type Answer,
  type LiveApp,
  type LiveEnterprise,
  type LiveMember,
} from '../test/reliability/support/live-api.js';
import { createPostgres } from './databases.js';
import { metricValue, scrapeMetrics, startKeyward } from './processes.js';

/**
 * `npm run soak [-- --minutes N --concurrency C]`: mixed load of the order service, the member
 * center and the license runtime against a real `keyward serve` (embedded database, or a fresh
 * database on DATABASE_URL's PostgreSQL server) for a set time. Passes with zero failed requests,
 * consumption that adds up, and bounded memory; prints a summary. Not part of `npm test`.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '8' },
  },
});
const minutes = Number(values.minutes);
const concurrency = Number(values.concurrency);
if (!(minutes > 0) || !(concurrency > 0)) throw new Error('--minutes and --concurrency must be positive');

const ADMIN_KEY = randomBytes(24).toString('hex');
/** RSS may grow this much past its level after warm-up before the run fails. */
const RSS_GROWTH_LIMIT = { ratio: 0.25, bytes: 48 * 1024 * 1024 };
/** The most an embedded-database server may hold at the end of the run. */
const EMBEDDED_RSS_CEILING = 400 * 1024 * 1024;

/**
 * The license runtime's part: each client runs one copy of a product at a time, on a machine taken
 * from a shared pool of twice as many machines as clients (so seats go from machine to machine),
 * against a license with fewer seats than clients (so some check-outs wait: `90005`).
 */
const HEARTBEATS_PER_LEASE = 3;
const SEATS = Math.max(1, Math.ceil((concurrency * 3) / 4));
const MACHINES = concurrency * 2;
/** Far more than a soak consumes (at most 5 a call), so `90007` is never the right answer. */
const LIMIT_AMOUNT = 2_000_000_000;
/** The runtime calls, in the order of a copy's cycle: what the summary counts them as. */
const RUNTIME_CALLS = ['check-out', 'heartbeat', 'consume', 'check-in'] as const;
type RuntimeCall = (typeof RUNTIME_CALLS)[number];
const SEATS_IN_USE = '90005';

/** One client's copy of the product: the machine it runs on and where it is in its cycle. */
interface Copy {
  machine: string | null;
  leaseId: string | null;
  beats: number;
  consumed: boolean;
}

interface World {
  base: string;
  app: LiveApp;
  token: string;
  enterprise: LiveEnterprise;
  members: LiveMember[];
  /** Locks of the enterprise's customer, one per worker, for lock/assign toggles without contention. */
  assetNums: string[];
  assetIds: string[];
  licenseOrderIds: string[];
  /** Bodies already accepted: sending one again is a client's retry. */
  sentBatches: Array<Record<string, unknown>>;
  /** The lock the runtime checks out from, and its one product (SEATS seats, LIMIT_AMOUNT). */
  license: { assetNum: string; crmProductId: string };
  /** Machines no copy runs on now. */
  idleMachines: string[];
  /** Client k's copy is copies[k]. */
  copies: Copy[];
  /** Sum of the amounts consumed, and the highest product total a consume answered. */
  consumption: { asked: number; highestTotal: number };
}

/** A call that stands for one of several kinds, with the refusals that are right answers to it. */
interface Step {
  kind: string;
  answer: Answer;
  /** Codes this call may answer by design (a check-out with every seat held). */
  expected?: readonly string[];
  /** Why a success answer is wrong all the same. */
  wrong?: string;
}

/** One call by client `worker`, its `turn`-th of this operation. */
type Operation = (world: World, worker: number, turn: number) => Promise<Answer | Step>;

const admin = (w: World) => memberHeaders(w.token, w.enterprise.adminToken);
const own = <T>(list: T[], worker: number): T => list[worker % list.length] as T;

/**
 * Client k's copy one step on: check out on a machine from the pool (a refusal gives the machine
 * back), HEARTBEATS_PER_LEASE heartbeats, a consume, a check-in (the machine goes back).
 */
async function runtimeStep(w: World, k: number, n: number): Promise<Step> {
  const copy = w.copies[k] as Copy;
  const headers = orderHeaders(w.token);
  if (copy.leaseId === null || copy.machine === null) {
    // A machine kept from a check-out that got no answer may resume what that one made.
    const fromPool = copy.machine === null;
    const machine = copy.machine ?? (w.idleMachines.shift() as string);
    copy.machine = machine;
    const answer = await call<{ leaseId: string; status: string }>(w.base, 'POST', `${RUNTIME}/leases`, {
      headers,
      body: { ...w.license, fingerprint: machine },
    });
    if (answer.status === 200 && answer.code === 0) {
      Object.assign(copy, { leaseId: answer.data.leaseId, beats: 0, consumed: false });
      // An idle machine's last lease was checked in: nothing may be resumed.
      const wrong =
        fromPool && answer.data.status !== 'granted' ? `${answer.data.status}, not granted` : undefined;
      return { kind: 'check-out', answer, expected: [SEATS_IN_USE], ...(wrong ? { wrong } : {}) };
    }
    w.idleMachines.push(machine);
    copy.machine = null;
    return { kind: 'check-out', answer, expected: [SEATS_IN_USE] };
  }
  const lease = `${RUNTIME}/leases/${copy.leaseId}`;
  const fingerprint = copy.machine;
  if (copy.beats < HEARTBEATS_PER_LEASE) {
    copy.beats += 1;
    return {
      kind: 'heartbeat',
      answer: await call(w.base, 'POST', `${lease}/heartbeat`, { headers, body: { fingerprint } }),
    };
  }
  if (!copy.consumed) {
    copy.consumed = true;
    const amount = (n % 5) + 1;
    const answer = await call<{ consumed: number }>(w.base, 'POST', `${lease}/consume`, {
      headers,
      body: { fingerprint, amount },
    });
    if (answer.status === 200 && answer.code === 0) {
      w.consumption.asked += amount;
      w.consumption.highestTotal = Math.max(w.consumption.highestTotal, answer.data.consumed);
    }
    return { kind: 'consume', answer };
  }
  try {
    return {
      kind: 'check-in',
      answer: await call(w.base, 'POST', `${lease}/check-in`, { headers, body: { fingerprint } }),
    };
  } finally {
    // Whatever the answer, the copy starts over; a lease left live fails its machine's next check-out.
    w.idleMachines.push(fingerprint);
    Object.assign(copy, { machine: null, leaseId: null });
  }
}

/**
 * The mix, by weight: reads most, then orders, retries and assignments, as a console and a CRM
 * would, and running copies of the licensed product. An entry that makes several kinds of call
 * lists them, and the summary counts each.
 */
const MIX: Array<[name: string, weight: number, op: Operation, calls?: readonly string[]]> = [
  [
    'shellnums',
    2,
    (w) => call(w.base, 'POST', `${ORDER}/shellnums`, { headers: orderHeaders(w.token), body: { size: 5 } }),
  ],
  [
    'batchOrder sync',
    3,
    async (w) => {
      const { body } = purchaseBatch(w.app, { orders: 2, assets: 2 });
      const answer = await postBatch(w.base, w.app, w.token, body);
      if (answer.code === 0) {
        w.sentBatches.push(body);
        w.licenseOrderIds.push(...answer.data.map((d) => d.licenseOrderId));
      }
      return answer;
    },
  ],
  [
    'batchOrder async',
    1,
    (w) => postBatch(w.base, w.app, w.token, purchaseBatch(w.app, { syncMode: 'async' }).body),
  ],
  [
    'batchOrder retry',
    1,
    (w, _k, n) => postBatch(w.base, w.app, w.token, w.sentBatches[n % w.sentBatches.length]),
  ],
  [
    'license order status',
    2,
    (w, _k, n) =>
      call(w.base, 'GET', `${ORDER}/licenseOrder/${w.licenseOrderIds[n % w.licenseOrderIds.length]}`, {
        headers: orderHeaders(w.token),
      }),
  ],
  [
    'query enterprise',
    2,
    (w) =>
      call(
        w.base,
        'GET',
        `${ORDER}/enterprise/user/query?channelCode=${w.app.channel}&channelCustomerId=${w.enterprise.channelCustomerId}`,
        { headers: orderHeaders(w.token) },
      ),
  ],
  [
    'lock / unlock',
    2,
    (w, k, n) =>
      call(w.base, 'POST', `${ORDER}/asset/${n % 2 === 0 ? 'lock' : 'unlock'}`, {
        headers: orderHeaders(w.token),
        body: { assetNums: [own(w.assetNums, k)], operatorIdentity: 'soak' },
      }),
  ],
  [
    'list members',
    3,
    (w, _k, n) =>
      call(
        w.base,
        'GET',
        `${ME}/enterprise/${w.enterprise.enterpriseGlobalId}/members?pageSize=20&pageNum=${(n % 3) + 1}`,
        {
          headers: admin(w),
        },
      ),
  ],
  [
    'list asset numbers',
    2,
    (w) =>
      call(w.base, 'GET', `${ME}/enterprise/${w.enterprise.enterpriseGlobalId}/asset/assetNums`, {
        headers: admin(w),
      }),
  ],
  [
    'products under an asset',
    2,
    (w, k) =>
      call(w.base, 'GET', `${ME}/enterprise/asset/${own(w.assetIds, k)}/merchandiseProducts`, {
        headers: admin(w),
      }),
  ],
  [
    'edit member',
    1,
    (w, k, n) =>
      call(
        w.base,
        'PUT',
        `${ME}/enterprise/${w.enterprise.enterpriseGlobalId}/member/${own(w.members, k).globalId}`,
        {
          headers: admin(w),
          body: { name: `Soak ${n % 100}`, remark: `pass ${n}` },
        },
      ),
  ],
  [
    'assign / unassign',
    2,
    (w, k, n) =>
      call(w.base, 'POST', `${ME}/enterprise/member/${own(w.members, k).globalId}/privileges`, {
        headers: admin(w),
        body: n % 2 === 0 ? { addAssets: [own(w.assetNums, k)] } : { deleteAssets: [own(w.assetNums, k)] },
      }),
  ],
  ['license runtime', 2 * (HEARTBEATS_PER_LEASE + 3), runtimeStep, RUNTIME_CALLS],
];

async function prepare(base: string): Promise<World> {
  const app = await createApp(base, ADMIN_KEY, ['auth_order', 'auth_me', 'auth_runtime']);
  const token = await appToken(base, app);
  const enterprise = await createEnterprise(base, ADMIN_KEY, app, token);
  const members = await addMembers(base, token, enterprise, concurrency);
  const locks = purchaseBatch(app, { channelCustomerId: enterprise.channelCustomerId, assets: concurrency });
  const bought = await postBatch(base, app, token, locks.body);
  if (bought.code !== 0) throw new Error(`setup order failed: ${bought.body}`);
  const listed = await call<Array<{ assetNum: string; assetId: string }>>(
    base,
    'GET',
    `${ME}/enterprise/${enterprise.enterpriseGlobalId}/asset/assetNums`,
    { headers: memberHeaders(token, enterprise.adminToken) },
  );
  const ids = new Map(listed.data.map((i) => [i.assetNum, i.assetId]));
  // The runtime's license: a lock of a customer of its own, apart from the locks toggled above.
  const licensed = product('Soak runtime', { limitConcurrent: SEATS, limitAmount: LIMIT_AMOUNT });
  const runtimeLock = purchaseBatch(app, { products: () => [licensed] });
  const runtimeOrder = await postBatch(base, app, token, runtimeLock.body);
  if (runtimeOrder.code !== 0) throw new Error(`setup order failed: ${runtimeOrder.body}`);
  const run = randomBytes(4).toString('hex');
  return {
    base,
    app,
    token,
    enterprise,
    members,
    assetNums: locks.assetNums,
    assetIds: locks.assetNums.map((n) => ids.get(n) as string),
    licenseOrderIds: bought.data.map((d) => d.licenseOrderId),
    sentBatches: [locks.body],
    license: { assetNum: runtimeLock.assetNums[0] as string, crmProductId: licensed.crmProductId as string },
    idleMachines: Array.from({ length: MACHINES }, (_, i) => `soak-${run}-machine-${i}`),
    copies: Array.from({ length: concurrency }, () => ({
      machine: null,
      leaseId: null,
      beats: 0,
      consumed: false,
    })),
    consumption: { asked: 0, highestTotal: 0 },
  };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

async function rss(base: string): Promise<number> {
  return metricValue(await scrapeMetrics(base), 'process_resident_memory_bytes') ?? Number.NaN;
}

const percentile = (sorted: number[], p: number) =>
  sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

async function main(): Promise<void> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-soak-'));
  // On PostgreSQL, a database of its own on DATABASE_URL's server, dropped at the end.
  const postgres = process.env.DATABASE_URL ? await createPostgres(process.env.DATABASE_URL) : undefined;
  const server = await startKeyward({
    DATA_DIR: dataDir,
    KEYWARD_ADMIN_KEY: ADMIN_KEY,
    DATABASE_URL: postgres?.url ?? '',
  });
  const database = postgres ? 'PostgreSQL' : 'embedded';
  const failures: string[] = [];
  const kinds = MIX.flatMap(([name, , , calls]) => calls ?? [name]);
  const latencies = new Map<string, number[]>(kinds.map((kind) => [kind, []]));
  /** Refusals that were the right answer, by kind and code. */
  const refusals = new Map<string, Map<string, number>>(kinds.map((kind) => [kind, new Map()]));
  const samples: Array<[seconds: number, bytes: number]> = [];
  let status = 1;
  try {
    const world = await prepare(server.url);
    const deck = MIX.flatMap(([name, weight, op]) =>
      Array.from({ length: weight }, () => [name, op] as const),
    );
    // Clients walk the deck in strides of 7 (or the next number with no factor in common with its
    // length), so each meets every entry and neighbouring clients make different calls.
    let stride = 7;
    while (gcd(stride, deck.length) !== 1) stride += 1;
    const started = performance.now();
    const end = started + minutes * 60_000;
    const sampler = setInterval(() => {
      void rss(server.url).then((bytes) => samples.push([(performance.now() - started) / 1000, bytes]));
    }, 5_000);
    samples.push([0, await rss(server.url)]);
    const worker = async (k: number) => {
      const turns = new Map<string, number>();
      for (let i = k; performance.now() < end; i += 1) {
        const [name, op] = deck[(i * stride) % deck.length] as (typeof deck)[number];
        // Each client flips its own member's and lock's state on its own turns: nobody contends.
        const turn = (turns.get(name) ?? 0) + 1;
        turns.set(name, turn);
        const t0 = performance.now();
        try {
          const result = await op(world, k, turn);
          const step: Step = 'answer' in result ? result : { kind: name, answer: result };
          const { answer } = step;
          latencies.get(step.kind)?.push(performance.now() - t0);
          const code = String(answer.code);
          if (answer.status === 200 && answer.code === 0) {
            if (step.wrong !== undefined) failures.push(`${step.kind}: ${step.wrong}`);
          } else if (answer.status === 299 && step.expected?.includes(code)) {
            const counted = refusals.get(step.kind) as Map<string, number>;
            counted.set(code, (counted.get(code) ?? 0) + 1);
          } else {
            failures.push(`${step.kind}: ${answer.status} ${answer.body.slice(0, 200)}`);
          }
        } catch (error) {
          failures.push(`${name}: ${(error as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, k) => worker(k)));
    clearInterval(sampler);
    const elapsed = (performance.now() - started) / 1000;
    samples.push([elapsed, await rss(server.url)]);

    // Every consume answers the product's total after it: the last to commit saw all of them.
    const { asked, highestTotal } = world.consumption;
    if (highestTotal !== asked)
      failures.push(`consume: ${asked} consumed in all, the product counts ${highestTotal}`);

    const total = [...latencies.values()].reduce((sum, list) => sum + list.length, 0);
    console.log(`soak: ${minutes} min on the ${database} database, ${concurrency} concurrent clients`);
    console.log(`requests ${total}, ${(total / elapsed).toFixed(0)} req/s, failed ${failures.length}`);
    console.log('operation                  count  refused    p50 ms   p99 ms');
    for (const [kind, list] of latencies) {
      const sorted = [...list].sort((x, y) => x - y);
      const refused = [...(refusals.get(kind)?.values() ?? [])].reduce((sum, n) => sum + n, 0);
      console.log(
        `${kind.padEnd(25)} ${String(list.length).padStart(6)} ${String(refused).padStart(8)} ${percentile(sorted, 50).toFixed(1).padStart(9)} ${percentile(sorted, 99).toFixed(1).padStart(8)}`,
      );
    }
    const counted = (kind: RuntimeCall) => latencies.get(kind)?.length ?? 0;
    const waited = refusals.get('check-out')?.get(SEATS_IN_USE) ?? 0;
    console.log(
      `license runtime: ${counted('check-out')} check-outs (${counted('check-out') - waited} granted, ${waited} refused ${SEATS_IN_USE}: ${SEATS} seats, ${concurrency} copies, ${MACHINES} machines), ` +
        `${counted('heartbeat')} heartbeats, ${counted('consume')} consumes (${asked} of ${LIMIT_AMOUNT} consumed), ${counted('check-in')} check-ins`,
    );
    // Growth is judged from the level after warm-up (the first fifth), to the level at the end.
    const valid = samples.filter(([, bytes]) => Number.isFinite(bytes));
    const warm = valid.filter(([t]) => t >= elapsed / 5);
    const settled = Math.min(...warm.slice(0, 3).map(([, b]) => b));
    const final = Math.max(...warm.slice(-3).map(([, b]) => b));
    const peak = Math.max(...valid.map(([, b]) => b));
    const growth = final - settled;
    const bounded = growth <= Math.max(RSS_GROWTH_LIMIT.bytes, settled * RSS_GROWTH_LIMIT.ratio);
    console.log(
      `server RSS: start ${mib(valid[0]?.[1] ?? Number.NaN)}, after warm-up ${mib(settled)}, peak ${mib(peak)}, end ${mib(final)} (${bounded ? 'bounded' : 'GROWING'})`,
    );
    // About ten samples across the run, for the shape of the curve (the sampler takes one every 5 s).
    const every = Math.max(1, Math.round(valid.length / 10));
    const curve = valid.filter((_, i) => i % every === 0 || i === valid.length - 1);
    console.log(
      `server RSS MiB by second: ${curve.map(([t, b]) => `${t.toFixed(0)}s ${(b / 1048576).toFixed(0)}`).join(', ')}`,
    );
    // The embedded database lives in the server's memory; it must stay within the ceiling too.
    const withinCeiling = postgres !== undefined || final <= EMBEDDED_RSS_CEILING;
    if (!withinCeiling) console.log(`server RSS ${mib(final)} is above ${mib(EMBEDDED_RSS_CEILING)}`);
    for (const failure of failures.slice(0, 10)) console.log(`failed: ${failure}`);
    status = failures.length === 0 && bounded && withinCeiling ? 0 : 1;
  } finally {
    await server.stop();
    await postgres?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  process.exit(status);
}

await main();
