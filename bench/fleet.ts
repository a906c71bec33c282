import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../src/db/client.js';
import { batchOrder } from './checkout-storm.js';
import { ConnectionWatch } from './fleet-activity.js';
import { RuntimeClient, succeeded, type Answer } from './fleet-http.js';
import { costsBetween, FleetMeter, type Costs, type Written } from './fleet-meter.js';
import { BeatSchedule } from './fleet-schedule.js';
import { percentile, summarize, type Measured } from './load.js';
import type { FLEET } from './settings.js';
import type { Session } from './session.js';

// A fleet at its heartbeat interval, then Monday 9:00. `machines` running copies check out seats
// of `licenses` locks over HTTP (50 clients at once) and from then on heartbeat at the interval
// the server answers, each at its own moment within it, as copies started at different times do;
// after the last check-out and one interval more (every copy on its own cadence), `seconds` are
// measured with nothing but the fleet's heartbeats; then `wave.machines` new machines check out
// one license of as many seats, `wave.clients` at once, while the fleet goes on beating.
//
// Costs per call kind come from readings between phases with one kind of call running
// (bench/fleet-meter.ts): the first `costedCheckOuts` check-outs run before any heartbeat, and the
// steady phase runs nothing but heartbeats. Those copies' leases are young enough (lease five
// intervals) to wait for their first heartbeat until the fleet starts beating. Costs are not
// apportioned between kinds running together: a heartbeat's share of a statement depends on how
// many arrive together, and so changes with what else runs.

export type FleetSettings = typeof FLEET;

/** PostgreSQL's table statistics reach pg_stat_user_tables when a backend goes idle, within 10 s. */
const STATS_SETTLE_MS = 11_000;
const TICK_MS = 5;

/** The answers of one call kind in one phase. */
class Calls {
  readonly times: number[] = [];
  /** For heartbeats: how late each was sent after it was due (the load generator's lag). */
  readonly late: number[] = [];
  failed = 0;
  firstFailure = '';
  /** Heartbeats not sent because the copy's last one was still unanswered when the next fell due. */
  skipped = 0;
  /** The most heartbeats unanswered at once: past the load generator's connections they queue in it. */
  peak = 0;
  started = performance.now();
  ended = 0;

  record(answer: Answer, ok: boolean): void {
    this.times.push(answer.ms);
    this.ended = performance.now();
    if (ok) return;
    this.failed += 1;
    this.firstFailure ||= `HTTP ${answer.status} ${answer.body.slice(0, 200)}`;
  }

  measured(seconds = (this.ended - this.started) / 1000): Measured {
    return summarize(this.times, seconds);
  }
}

/** The fleet's running copies and their heartbeats. */
class Fleet {
  private readonly leaseIds: string[] = [];
  private readonly fingerprints: string[] = [];
  private readonly intervals: number[] = [];
  private readonly gone = new Set<number>();
  /** Copies waiting for a heartbeat's answer. */
  private readonly waiting = new Set<number>();
  private readonly schedule = new BeatSchedule();
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  /** Where heartbeat answers are counted: the phase running. */
  beats = new Calls();
  answered = 0;
  lost = 0;
  firstLost = '';

  constructor(private readonly client: RuntimeClient) {}

  get size(): number {
    return this.leaseIds.length - this.gone.size;
  }

  /** A copy that got its lease: its first heartbeat at a random moment of its first interval. */
  join(leaseId: string, fingerprint: string, intervalMs: number): void {
    const machine = this.leaseIds.length;
    this.leaseIds.push(leaseId);
    this.fingerprints.push(fingerprint);
    this.intervals.push(intervalMs);
    this.schedule.add(machine, performance.now() + Math.random() * intervalMs);
  }

  start(): void {
    this.timer = setInterval(() => this.tick(), TICK_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    while (this.inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  }

  private tick(): void {
    const now = performance.now();
    for (let due = this.schedule.takeDue(now); due !== undefined; due = this.schedule.takeDue(now)) {
      if (this.gone.has(due.machine)) continue;
      // A copy waits for its heartbeat's answer before it sends the next, as a program's loop
      // does: a server that falls behind meets fewer heartbeats, not a queue that grows without
      // end in the load generator (every late answer then later still, and every lease lost).
      if (this.waiting.has(due.machine)) this.beats.skipped += 1;
      else this.beat(due.machine, now - due.at);
      // On the copy's own cadence, whenever the answer comes.
      this.schedule.add(due.machine, due.at + (this.intervals[due.machine] as number));
    }
  }

  private beat(machine: number, late: number): void {
    const calls = this.beats;
    calls.late.push(late);
    this.inFlight += 1;
    calls.peak = Math.max(calls.peak, this.inFlight);
    this.waiting.add(machine);
    void this.client
      .post(`/leases/${this.leaseIds[machine] as string}/heartbeat`, {
        fingerprint: this.fingerprints[machine] as string,
      })
      .then((answer) => {
        this.inFlight -= 1;
        this.waiting.delete(machine);
        this.answered += 1;
        calls.record(answer, succeeded(answer));
        // A lease the server no longer knows live (90008–90010): that copy has lost its seat.
        if (/"code":"900(08|09|10)"/.test(answer.body)) {
          this.gone.add(machine);
          this.lost += 1;
          this.firstLost ||= answer.body.slice(0, 200);
        }
      });
  }
}

interface License {
  assetNum: string;
  crmProductId: string;
}

/** `count` check-outs by `clients` at once; each granted lease handed to `granted`. */
async function checkOuts(
  client: RuntimeClient,
  count: number,
  clients: number,
  machine: (i: number) => License & { fingerprint: string },
  calls: Calls,
  granted: (leaseId: string, fingerprint: string, intervalMs: number) => void,
): Promise<void> {
  let next = 0;
  calls.started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < count; i = next++) {
        const body = machine(i);
        const answer = await client.post('/leases', body);
        const ok = succeeded(answer);
        calls.record(answer, ok);
        if (!ok) continue;
        const data = (
          JSON.parse(answer.body) as { data: { leaseId: string; heartbeatIntervalSeconds: number } }
        ).data;
        granted(data.leaseId, body.fingerprint, data.heartbeatIntervalSeconds * 1000);
      }
    }),
  );
}

/** A license's slots made by one check-out, checked in again: no live lease, seats ready. */
async function prime(client: RuntimeClient, license: License): Promise<void> {
  const fingerprint = `fleet-prime-${randomBytes(4).toString('hex')}`;
  const out = await client.post('/leases', { ...license, fingerprint });
  const leaseId = /"leaseId":"([^"]+)"/.exec(out.body)?.[1];
  if (leaseId === undefined) throw new Error(`fleet: priming ${license.assetNum}: ${out.body.slice(0, 300)}`);
  const back = await client.post(`/leases/${leaseId}/check-in`, { fingerprint });
  if (!succeeded(back)) throw new Error(`fleet: check-in: ${back.body.slice(0, 300)}`);
}

/** A call kind's cost each: CPU in ms, WAL in bytes, rows by table. */
export interface PerCall {
  keywardCpuMs: number;
  postgresCpuMs: number;
  loadCpuMs: number;
  ownWalBytes: number | null;
  clusterWalBytes: number;
  rows: number;
  rowsByTable: Map<string, Written>;
}

/** `costs` divided by `calls`. */
function perCall(costs: Costs, calls: number): PerCall {
  const rowsByTable = new Map<string, Written>();
  for (const [table, w] of costs.rows) {
    rowsByTable.set(table, {
      inserted: w.inserted / calls,
      updated: w.updated / calls,
      hotUpdated: w.hotUpdated / calls,
      deleted: w.deleted / calls,
    });
  }
  return {
    keywardCpuMs: costs.keywardCpuMs / calls,
    postgresCpuMs: costs.postgresCpuMs / calls,
    loadCpuMs: costs.loadCpuMs / calls,
    ownWalBytes: costs.ownWalBytes === null ? null : costs.ownWalBytes / calls,
    clusterWalBytes: costs.clusterWalBytes / calls,
    rows: [...rowsByTable.values()].reduce((n, w) => n + w.inserted + w.updated + w.deleted, 0),
    rowsByTable,
  };
}

export interface FleetResult {
  machines: number;
  seats: number;
  heartbeatSeconds: number;
  /** The check-outs run alone, what each cost, and the fleet's other check-outs (it beating). */
  quiet: Measured & { failed: number; firstFailure: string };
  checkOut: PerCall;
  fill: Measured & { failed: number; firstFailure: string };
  /** The fleet's heartbeats over the steady phase, and what each cost. */
  steady: Measured & {
    failed: number;
    firstFailure: string;
    skipped: number;
    lateP99: number;
    peak: number;
  };
  heartbeat: PerCall;
  /** The steady phase's costs in all: how busy the machine was, and PostgreSQL's CPU by process kind. */
  steadyCosts: Costs;
  /** The bench database's connections over the steady phase: average number in each state. */
  steadyConnections: Map<string, number>;
  /** The 9:00 wave's check-outs, and the fleet's heartbeats meanwhile. */
  wave: Measured & { failed: number; firstFailure: string };
  waveBeats: Measured & { failed: number; peak: number };
  /** The wave's costs in all (its check-outs and the fleet's heartbeats), and the connections. */
  waveCosts: Costs;
  waveConnections: Map<string, number>;
  /** Copies whose lease a heartbeat found gone, and the first such answer. */
  lost: number;
  firstLost: string;
  /** Live leases after the run: the fleet's (expected: every copy) and the wave's license's. */
  fleetLive: number;
  waveLive: number;
  extraRefused: boolean;
  overGranted: number;
  /** The largest tables after the run: bytes with their indexes, and live rows. */
  tables: Array<{ table: string; bytes: number; rows: number }>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

async function liveOf(db: Db, crmProductId: string): Promise<number> {
  const live = await sql<{ n: number }>`
    select count(*)::int as n from runtime_leases l join product_instances p on p.id = l.product_id
     where p.crm_product_id = ${crmProductId} and l.ended_at is null and l.expires_at > now()`.execute(db);
  return live.rows[0]?.n ?? -1;
}

async function overGranted(db: Db, crmProductIds: string[]): Promise<number> {
  const over = await sql<{ n: number }>`
    select count(*)::int as n from (
      select l.product_id from runtime_leases l join product_instances p on p.id = l.product_id
       where p.crm_product_id = any(${crmProductIds}) and l.ended_at is null and l.expires_at > now()
       group by l.product_id, p.limit_concurrent having count(*) > p.limit_concurrent) t`.execute(db);
  return over.rows[0]?.n ?? -1;
}

async function largestTables(db: Db): Promise<FleetResult['tables']> {
  const tables = await sql<{ table: string; bytes: string; rows: string }>`
    select relname as table, pg_total_relation_size(relid)::text as bytes, n_live_tup::text as rows
      from pg_stat_user_tables order by pg_total_relation_size(relid) desc limit 12`.execute(db);
  return tables.rows.map((t) => ({ table: t.table, bytes: Number(t.bytes), rows: Number(t.rows) }));
}

export async function runFleet(
  url: string,
  databaseUrl: string,
  keywardPids: readonly number[],
  session: Session,
  db: Db,
  settings: FleetSettings,
  log: (message: string) => void,
): Promise<FleetResult> {
  const tag = randomBytes(4).toString('hex');
  const seats = Math.ceil(settings.machines / settings.licenses);
  const product = (crmProductId: string, limitConcurrent: number) => ({
    crmProductId,
    productUri: crmProductId,
    productName: 'Fleet',
    limitStartDate: Date.now() - 86_400_000,
    limitEndDate: Date.now() + 30 * 86_400_000,
    limitConcurrent,
  });
  const fleetProduct = `FLEET-${tag}`;
  const licenses = Array.from({ length: settings.licenses }, (_, i) => ({
    assetNum: `FL-${tag}-${i}`,
    crmProductId: fleetProduct,
  }));
  const wave = { assetNum: `FL-${tag}-wave`, crmProductId: `FLEET-W-${tag}` };
  await batchOrder(
    url,
    session,
    licenses.map((l) => l.assetNum),
    product(fleetProduct, seats),
  );
  await batchOrder(url, session, [wave.assetNum], product(wave.crmProductId, settings.wave.machines));
  const client = new RuntimeClient(url, session.appToken, settings.fillClients, 60_000);
  // A heartbeat unanswered for an interval is given up: the copy's next one is due.
  const beatClient = new RuntimeClient(
    url,
    session.appToken,
    settings.beatSockets,
    settings.heartbeatSeconds * 1000,
  );
  for (const license of [...licenses, wave]) await prime(client, license);
  log(
    `fleet: ${settings.licenses} licenses of ${seats} seats and one of ${settings.wave.machines}, slots made`,
  );

  const fleet = new Fleet(beatClient);
  const meter = await FleetMeter.open(databaseUrl, keywardPids);
  const watch = await ConnectionWatch.open(databaseUrl);
  meter.ignore(watch.pid);
  try {
    const reading = async () => ({ beats: fleet.answered, at: await meter.read() });
    const machine = (i: number) => ({
      ...(licenses[i % licenses.length] as License),
      fingerprint: `fleet-${tag}-${i}`,
    });
    const calls = (c: Calls) => ({ ...c.measured(), failed: c.failed, firstFailure: c.firstFailure });

    // Check-outs alone, their costs read once the statistics have settled; their copies join the
    // fleet when it starts.
    const costed = Math.min(settings.costedCheckOuts, settings.machines);
    // The slots just made (priming) reach the table statistics first.
    await sleep(STATS_SETTLE_MS);
    const r0 = await reading();
    const quiet = new Calls();
    const waiting: Array<[string, string, number]> = [];
    await checkOuts(client, costed, settings.fillClients, machine, quiet, (...copy) => waiting.push(copy));
    await sleep(STATS_SETTLE_MS);
    const r1 = await reading();
    const checkOut = perCall(costsBetween(r0.at, r1.at), quiet.times.length);
    log(
      `fleet: ${costed} check-outs alone, ${quiet.measured().requestsPerSecond.toFixed(0)}/s, ` +
        `${quiet.failed} failed; the rest with the fleet beating`,
    );

    fleet.start();
    for (const copy of waiting) fleet.join(...copy);
    const fill = new Calls();
    await checkOuts(
      client,
      settings.machines - costed,
      settings.fillClients,
      (i) => machine(costed + i),
      fill,
      (...copy) => fleet.join(...copy),
    );
    const filled = performance.now();
    log(`fleet: ${fleet.size} machines checked out (${fill.failed} failed), all beating`);
    // One interval after the last check-out, every copy beats on its own cadence.
    await sleep(filled + settings.heartbeatSeconds * 1000 - performance.now());

    const steady = new Calls();
    fleet.beats = steady;
    const r2 = await reading();
    watch.start();
    await sleep(settings.seconds * 1000);
    const steadyConnections = watch.stop();
    const r3 = await reading();
    const steadySeconds = (r3.at.at - r2.at.at) / 1000;
    log(
      `fleet: ${steady.times.length} heartbeats in ${steadySeconds.toFixed(0)} s ` +
        `(${(steady.times.length / steadySeconds).toFixed(0)}/s), ${steady.failed} failed, ${steady.skipped} not sent ` +
        `(the last unanswered), ${fleet.lost} copies lost`,
    );

    const waveBeats = new Calls();
    fleet.beats = waveBeats;
    const waveCalls = new Calls();
    watch.start();
    await checkOuts(
      client,
      settings.wave.machines,
      settings.wave.clients,
      (i) => ({ ...wave, fingerprint: `fleet-${tag}-wave-${i}` }),
      waveCalls,
      () => undefined,
    );
    const waveDone = performance.now();
    const waveConnections = watch.stop();
    const r4 = await reading();
    fleet.beats = new Calls();
    await fleet.stop();

    const steadyCosts = costsBetween(r2.at, r3.at);
    const extra = await client.post('/leases', { ...wave, fingerprint: `fleet-${tag}-one-more` });
    return {
      machines: settings.machines,
      seats,
      heartbeatSeconds: settings.heartbeatSeconds,
      quiet: calls(quiet),
      checkOut,
      fill: calls(fill),
      steady: {
        ...calls(steady),
        ...steady.measured(steadySeconds),
        skipped: steady.skipped,
        peak: steady.peak,
        lateP99: percentile(
          [...steady.late].sort((a, b) => a - b),
          99,
        ),
      },
      heartbeat: perCall(steadyCosts, r3.beats - r2.beats),
      steadyCosts,
      steadyConnections,
      wave: calls(waveCalls),
      waveBeats: {
        ...waveBeats.measured((waveDone - waveCalls.started) / 1000),
        failed: waveBeats.failed,
        peak: waveBeats.peak,
      },
      waveCosts: costsBetween(r3.at, r4.at),
      waveConnections,
      lost: fleet.lost,
      firstLost: fleet.firstLost,
      fleetLive: await liveOf(db, fleetProduct),
      waveLive: await liveOf(db, wave.crmProductId),
      extraRefused: extra.body.includes('"code":"90005"'),
      overGranted: await overGranted(db, [fleetProduct, wave.crmProductId]),
      tables: await largestTables(db),
    };
  } finally {
    await fleet.stop();
    await meter.close();
    await watch.close();
    client.close();
    beatClient.close();
  }
}
