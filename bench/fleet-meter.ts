import fs from 'node:fs';
import pg from 'pg';
import { BENCH_APPLICATION } from './fleet-activity.js';

// What the fleet's calls cost, read while they run: CPU of the Keyward processes and of
// PostgreSQL's (from /proc, Linux only), WAL, and rows written (pg_stat_user_tables). The bench
// shares its PostgreSQL server with other databases, so the cluster's WAL position
// (pg_current_wal_flush_lsn) also moves with their work; pg_walinspect reads the records between
// two positions and keeps those that touch the bench database's relations or belong to its
// transactions (their commits), which is the bench's own WAL.

const CLOCK_TICKS = 100;
const SAMPLE_EVERY_MS = 5000;

/** utime + stime of a process in ms, or undefined once it is gone (bench/cpu-budget.ts too). */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

/** Busy and all CPU ms of the whole machine (/proc/stat): how much else ran on a shared machine. */
function machineMs(): { busy: number; all: number } {
  const fields = (fs.readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .split(/\s+/)
    .slice(1, 9)
    .map(Number);
  const all = fields.reduce((a, b) => a + b, 0);
  // idle and iowait
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: ((all - idle) * 1000) / CLOCK_TICKS, all: (all * 1000) / CLOCK_TICKS };
}

export interface Written {
  inserted: number;
  updated: number;
  /** Of the updated, those PostgreSQL made without touching an index (HOT). */
  hotUpdated: number;
  deleted: number;
}

/** Totals since the meter opened. */
export interface Reading {
  at: number;
  keywardCpuMs: number;
  postgresCpuMs: number;
  /** PostgreSQL's CPU by pg_stat_activity.backend_type (client backend, autovacuum worker, …). */
  postgresByKind: Map<string, number>;
  /** This process: the load generator. */
  loadCpuMs: number;
  /** The whole machine's busy CPU, and all its CPU (busy and idle, every core). */
  machineBusyMs: number;
  machineAllMs: number;
  clusterWalBytes: number;
  /** The bench database's records among them; null when pg_walinspect could not read them. */
  ownWalBytes: number | null;
  rows: Map<string, Written>;
}

interface WalRange {
  last: string | null;
  total: string;
  own: string;
}

export class FleetMeter {
  /** CPU ms of each PostgreSQL process when last seen, and what they used since the start. */
  private readonly postgresSeen = new Map<number, number>();
  private postgresMs = 0;
  private readonly postgresByKind = new Map<string, number>();
  private readonly machineStart = machineMs();
  private readonly keywardStart: Map<number, number>;
  private readonly keywardLast: Map<number, number>;
  private readonly loadStart = process.cpuUsage();
  private walFrom: string;
  private readonly walStart: number;
  private walNow: number;
  private ownWal: number | null = 0;
  private pending: Promise<void> = Promise.resolve();
  private sampling = false;
  /** Backends of the bench's own watchers, whose CPU is the bench's rather than the server's. */
  private readonly ignored: number[] = [];
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly client: pg.Client,
    private readonly ownRelations: string,
    private readonly slot: string | undefined,
    private readonly keywardPids: readonly number[],
    lsn: { text: string; bytes: number },
  ) {
    const cpu = new Map(keywardPids.map((pid) => [pid, cpuMsOf(pid) ?? 0]));
    this.keywardStart = cpu;
    this.keywardLast = new Map(cpu);
    this.walFrom = lsn.text;
    this.walStart = lsn.bytes;
    this.walNow = lsn.bytes;
    // Sampled as the run goes, not only at each reading: a PostgreSQL process that comes and goes
    // (an autovacuum worker) is seen, and pg_walinspect reads WAL before a checkpoint removes it.
    // A sample that outlasts the period is not queued behind: the next reads the longer range.
    this.timer = setInterval(() => {
      if (this.sampling) return;
      this.sampling = true;
      this.pending = this.pending.then(() => this.sample()).finally(() => (this.sampling = false));
    }, SAMPLE_EVERY_MS);
  }

  /** A meter on the bench database `url`, counting the CPU of the Keyward processes `pids`. */
  static async open(url: string, keywardPids: readonly number[]): Promise<FleetMeter> {
    const client = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
    await client.connect();
    await client.query('create extension if not exists pg_walinspect').catch(() => undefined);
    // A shared server's other databases may force checkpoints (DROP DATABASE does), which remove
    // WAL not yet read. A temporary physical replication slot, moved on as the WAL is read, keeps
    // it; it goes with this session, even if the bench dies.
    const slot = `keyward_bench_wal_${process.pid}`;
    const reserved = await client
      .query('select pg_create_physical_replication_slot($1, true, true)', [slot])
      .then(
        () => true,
        (error: unknown) => {
          console.warn(`no replication slot (${String(error)}): WAL read late may be gone`);
          return false;
        },
      );
    const oid = await client.query<{ oid: string }>(
      'select oid::text from pg_database where datname = current_database()',
    );
    const lsn = await client.query<{ text: string; bytes: string }>(
      `select pg_current_wal_flush_lsn()::text as text, (pg_current_wal_flush_lsn() - '0/0')::text as bytes`,
    );
    const at = lsn.rows[0] as { text: string; bytes: string };
    const meter = new FleetMeter(
      client,
      ` rel \\d+/${oid.rows[0]?.oid ?? '0'}/`,
      reserved ? slot : undefined,
      keywardPids,
      { text: at.text, bytes: Number(at.bytes) },
    );
    await meter.samplePostgresCpu(true);
    return meter;
  }

  /** Leaves a backend of the bench's own out of PostgreSQL's CPU. */
  ignore(pid: number): void {
    this.ignored.push(pid);
    this.postgresSeen.delete(pid);
  }

  /** The totals now. */
  async read(): Promise<Reading> {
    this.pending = this.pending.then(() => this.sample());
    await this.pending;
    for (const pid of this.keywardPids) {
      const ms = cpuMsOf(pid);
      if (ms !== undefined) this.keywardLast.set(pid, ms);
    }
    const keywardCpuMs = this.keywardPids.reduce(
      (sum, pid) => sum + (this.keywardLast.get(pid) ?? 0) - (this.keywardStart.get(pid) ?? 0),
      0,
    );
    const load = process.cpuUsage(this.loadStart);
    const machine = machineMs();
    return {
      at: performance.now(),
      keywardCpuMs,
      postgresCpuMs: this.postgresMs,
      postgresByKind: new Map(this.postgresByKind),
      loadCpuMs: (load.user + load.system) / 1000,
      machineBusyMs: machine.busy - this.machineStart.busy,
      machineAllMs: machine.all - this.machineStart.all,
      clusterWalBytes: this.walNow - this.walStart,
      ownWalBytes: this.ownWal,
      rows: await this.rowsWritten(),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.pending;
    await this.client.end();
  }

  private async sample(): Promise<void> {
    await this.samplePostgresCpu(false);
    await this.sampleWal();
  }

  /**
   * The bench database's backends (the servers' pools, autovacuum workers) and the cluster's
   * background processes (WAL writer, checkpointer, background writer), not this meter's own
   * backend, whose pg_walinspect reads are the bench's work rather than the server's. A process
   * first seen after the start counts from zero; the background processes also serve other
   * databases of a shared server.
   */
  private async samplePostgresCpu(baseline: boolean): Promise<void> {
    const processes = await this.client.query<{ pid: number; kind: string }>(
      `select pid, backend_type as kind from pg_stat_activity
        where (datname = current_database() or datname is null) and pid <> pg_backend_pid()
          and pid <> all($1::int[])`,
      [this.ignored],
    );
    for (const { pid, kind } of processes.rows) {
      const ms = cpuMsOf(pid);
      if (ms === undefined) continue;
      const used = ms - (this.postgresSeen.get(pid) ?? (baseline ? ms : 0));
      this.postgresMs += used;
      this.postgresByKind.set(kind, (this.postgresByKind.get(kind) ?? 0) + used);
      this.postgresSeen.set(pid, ms);
    }
  }

  /**
   * The WAL written since the last sample: every record's bytes, and the bytes of those that touch
   * the bench database's relations (block references of its oid) or belong to a transaction that
   * did (its commit record). A transaction whose commit falls in the next range loses its commit
   * record's few dozen bytes; the gaps between records (page headers) are in neither.
   */
  private async sampleWal(): Promise<void> {
    const flush = await this.client.query<{ text: string; bytes: string }>(
      `select pg_current_wal_flush_lsn()::text as text, (pg_current_wal_flush_lsn() - '0/0')::text as bytes`,
    );
    const now = flush.rows[0] as { text: string; bytes: string };
    this.walNow = Number(now.bytes);
    if (this.ownWal === null || now.text === this.walFrom) return;
    try {
      const range = await this.client.query<WalRange>(
        `with r as (
           select end_lsn, xid::text::bigint as xid, record_length, block_ref
             from pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
         ), ours as (
           select distinct xid from r where xid <> 0 and block_ref ~ $3
         )
         select max(end_lsn)::text as last,
                coalesce(sum(record_length), 0)::text as total,
                coalesce(sum(record_length) filter (where block_ref ~ $3 or xid in (select xid from ours)), 0)::text as own
           from r`,
        [this.walFrom, now.text, this.ownRelations],
      );
      const row = range.rows[0] as WalRange;
      this.ownWal += Number(row.own);
      // The next range starts where the last record read ended: one that straddled `now` is read
      // whole next time.
      if (row.last !== null) this.walFrom = row.last;
      // The slot lets go of what is read; should that fail, it only holds WAL a little longer.
      if (this.slot !== undefined)
        await this.client
          .query('select pg_replication_slot_advance($1, $2::pg_lsn)', [this.slot, this.walFrom])
          .catch(() => undefined);
    } catch (error) {
      console.warn(`pg_walinspect: ${String(error)}; the bench database's own WAL is not measured`);
      this.ownWal = null;
    }
  }

  private async rowsWritten(): Promise<Map<string, Written>> {
    const result = await this.client.query<{
      relname: string;
      ins: string;
      upd: string;
      hot: string;
      del: string;
    }>(
      `select relname, n_tup_ins::text as ins, n_tup_upd::text as upd, n_tup_hot_upd::text as hot,
              n_tup_del::text as del
         from pg_stat_user_tables`,
    );
    return new Map(
      result.rows.map((r) => [
        r.relname,
        {
          inserted: Number(r.ins),
          updated: Number(r.upd),
          hotUpdated: Number(r.hot),
          deleted: Number(r.del),
        },
      ]),
    );
  }
}

/** What happened between two readings: each total's difference, over `seconds`. */
export type Costs = Omit<Reading, 'at'> & { seconds: number };

export function costsBetween(from: Reading, to: Reading): Costs {
  const rows = new Map<string, Written>();
  for (const [table, after] of to.rows) {
    const before = from.rows.get(table) ?? { inserted: 0, updated: 0, hotUpdated: 0, deleted: 0 };
    const d = {
      inserted: after.inserted - before.inserted,
      updated: after.updated - before.updated,
      hotUpdated: after.hotUpdated - before.hotUpdated,
      deleted: after.deleted - before.deleted,
    };
    if (d.inserted + d.updated + d.deleted > 0) rows.set(table, d);
  }
  return {
    seconds: (to.at - from.at) / 1000,
    keywardCpuMs: to.keywardCpuMs - from.keywardCpuMs,
    postgresCpuMs: to.postgresCpuMs - from.postgresCpuMs,
    postgresByKind: new Map(
      [...to.postgresByKind].map(([kind, ms]) => [kind, ms - (from.postgresByKind.get(kind) ?? 0)]),
    ),
    loadCpuMs: to.loadCpuMs - from.loadCpuMs,
    machineBusyMs: to.machineBusyMs - from.machineBusyMs,
    machineAllMs: to.machineAllMs - from.machineAllMs,
    clusterWalBytes: to.clusterWalBytes - from.clusterWalBytes,
    ownWalBytes:
      from.ownWalBytes === null || to.ownWalBytes === null ? null : to.ownWalBytes - from.ownWalBytes,
    rows,
  };
}
