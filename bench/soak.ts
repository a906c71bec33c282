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
  purchaseBatch,
  type Answer,
  type LiveApp,
  type LiveEnterprise,
  type LiveMember,
} from '../test/reliability/support/live-api.js';
import { createPostgres } from './databases.js';
import { metricValue, scrapeMetrics, startKeyward } from './processes.js';

/**
 * `npm run soak [-- --minutes N --concurrency C]`: mixed load of both services against a real
 * `keyward serve` (embedded database, or a fresh database on DATABASE_URL's PostgreSQL server) for
 * a set time. Passes with zero failed requests and bounded memory; prints a summary. Not part of
 * `npm test`.
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
}

/** One call by client `worker`, its `turn`-th of this operation. */
type Operation = (world: World, worker: number, turn: number) => Promise<Answer>;

const admin = (w: World) => memberHeaders(w.token, w.enterprise.adminToken);
const own = <T>(list: T[], worker: number): T => list[worker % list.length] as T;

/** The mix, by weight: reads most, then orders, retries and assignments, as a console and a CRM would. */
const MIX: Array<[name: string, weight: number, op: Operation]> = [
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
];

async function prepare(base: string): Promise<World> {
  const app = await createApp(base, ADMIN_KEY);
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
  };
}

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
  const latencies = new Map<string, number[]>(MIX.map(([name]) => [name, []]));
  const samples: Array<[seconds: number, bytes: number]> = [];
  let status = 1;
  try {
    const world = await prepare(server.url);
    const deck = MIX.flatMap(([name, weight, op]) =>
      Array.from({ length: weight }, () => [name, op] as const),
    );
    const started = performance.now();
    const end = started + minutes * 60_000;
    const sampler = setInterval(() => {
      void rss(server.url).then((bytes) => samples.push([(performance.now() - started) / 1000, bytes]));
    }, 5_000);
    samples.push([0, await rss(server.url)]);
    const worker = async (k: number) => {
      const turns = new Map<string, number>();
      for (let i = k; performance.now() < end; i += 1) {
        const [name, op] = deck[(i * 7) % deck.length] as (typeof deck)[number];
        // Each client flips its own member's and lock's state on its own turns: nobody contends.
        const turn = (turns.get(name) ?? 0) + 1;
        turns.set(name, turn);
        const t0 = performance.now();
        try {
          const answer = await op(world, k, turn);
          latencies.get(name)?.push(performance.now() - t0);
          if (answer.status !== 200 || answer.code !== 0)
            failures.push(`${name}: ${answer.status} ${answer.body.slice(0, 200)}`);
        } catch (error) {
          failures.push(`${name}: ${(error as Error).message}`);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, k) => worker(k)));
    clearInterval(sampler);
    const elapsed = (performance.now() - started) / 1000;
    samples.push([elapsed, await rss(server.url)]);

    const total = [...latencies.values()].reduce((sum, list) => sum + list.length, 0);
    console.log(`soak: ${minutes} min on the ${database} database, ${concurrency} concurrent clients`);
    console.log(`requests ${total}, ${(total / elapsed).toFixed(0)} req/s, failed ${failures.length}`);
    console.log('operation                  count    p50 ms   p99 ms');
    for (const [name, list] of latencies) {
      const sorted = [...list].sort((x, y) => x - y);
      console.log(
        `${name.padEnd(25)} ${String(list.length).padStart(6)} ${percentile(sorted, 50).toFixed(1).padStart(9)} ${percentile(sorted, 99).toFixed(1).padStart(8)}`,
      );
    }
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
