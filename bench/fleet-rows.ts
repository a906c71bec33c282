import type { FleetResult, PerCall } from './fleet.js';
import type { Costs } from './fleet-meter.js';
import type { ResultRow } from './report.js';

// The fleet's lines of the report. Targets (issue 39): at least 1,500 heartbeats a second answered,
// at most 150 bytes of WAL a heartbeat averaged over the steady run, other machines' heartbeats
// answered within 250 ms (p99) during the 9:00 wave, and no seat lost or over-granted.

const TARGET = { beatsPerSecond: 1500, walPerBeat: 150, waveBeatP99Ms: 250 } as const;

const n = (count: number) => count.toLocaleString('en');

function line(
  scenario: string,
  unit: string,
  value: number,
  more: Partial<Pick<ResultRow, 'p50' | 'p99' | 'target' | 'pass'>> = {},
): ResultRow {
  return {
    scenario,
    database: 'postgres',
    unit,
    value,
    p50: more.p50 ?? null,
    p99: more.p99 ?? null,
    reference: null,
    referenceValue: null,
    ratio: null,
    target: more.target ?? null,
    pass: more.pass ?? null,
  };
}

/**
 * A call kind's cost lines: CPU of each side, WAL, rows. The heartbeat's also has the WAL position's
 * difference over the whole server, which on a shared server counts other databases' work too:
 * a check-out's is its phase's less its heartbeats, and that difference would be mostly theirs.
 */
function costLines(kind: string, c: PerCall, heartbeat: boolean): ResultRow[] {
  const own = c.ownWalBytes;
  return [
    line(`fleet: ${kind}, Keyward CPU per call`, 'µs', c.keywardCpuMs * 1000),
    line(`fleet: ${kind}, PostgreSQL CPU per call`, 'µs', c.postgresCpuMs * 1000),
    line(`fleet: ${kind}, load generator CPU per call`, 'µs', c.loadCpuMs * 1000),
    line(
      `fleet: ${kind}, WAL bytes per call (the bench database's records, pg_walinspect)`,
      'B',
      own ?? Number.NaN,
      heartbeat ? { target: `≤ ${TARGET.walPerBeat} B`, pass: own !== null && own <= TARGET.walPerBeat } : {},
    ),
    ...(heartbeat
      ? [
          line(
            `fleet: ${kind}, WAL bytes per call (whole server, pg_current_wal_flush_lsn)`,
            'B',
            c.clusterWalBytes,
          ),
        ]
      : []),
    line(`fleet: ${kind}, rows written per 1,000 calls`, 'rows', c.rows * 1000),
  ];
}

export function fleetRows(f: FleetResult, seconds: number, licenses: number, wave: number): ResultRow[] {
  const beats = `fleet: heartbeats of ${n(f.machines)} machines every ${f.heartbeatSeconds} s, ${seconds} s steady`;
  const on = `on ${licenses} licenses of ${n(f.seats)} seats, 50 clients`;
  const quiet = `fleet: the first ${n(f.quiet.requests)} check-outs ${on}, nothing else running`;
  const fill = `fleet: the other ${n(f.fill.requests)} check-outs ${on}, the fleet beating`;
  const waveName = `fleet: 9:00 wave, ${n(wave)} check-outs of one ${n(wave)}-seat license by 50 clients, the fleet beating`;
  const failed = f.quiet.failed + f.fill.failed + f.steady.failed + f.wave.failed + f.waveBeats.failed;
  return [
    line(beats, 'req/s', f.steady.requestsPerSecond, {
      p50: f.steady.p50,
      p99: f.steady.p99,
      target: `≥ ${n(TARGET.beatsPerSecond)}/s`,
      pass: f.steady.requestsPerSecond >= TARGET.beatsPerSecond,
    }),
    ...costLines('heartbeat', f.heartbeat, true),
    line('fleet: heartbeats sent late by the load generator, p99', 'ms', f.steady.lateP99),
    line("fleet: heartbeats not sent, the copy's last one unanswered", 'calls', f.steady.skipped),
    line(quiet, 'req/s', f.quiet.requestsPerSecond, { p50: f.quiet.p50, p99: f.quiet.p99 }),
    ...costLines('check-out', f.checkOut, false),
    ...(f.fill.requests > 0
      ? [line(fill, 'req/s', f.fill.requestsPerSecond, { p50: f.fill.p50, p99: f.fill.p99 })]
      : []),
    line(waveName, 'req/s', f.wave.requestsPerSecond, { p50: f.wave.p50, p99: f.wave.p99 }),
    line('fleet: heartbeats during the 9:00 wave, p99', 'ms', f.waveBeats.p99, {
      p50: f.waveBeats.p50,
      p99: f.waveBeats.p99,
      target: `p99 ≤ ${TARGET.waveBeatP99Ms} ms`,
      pass: f.waveBeats.p99 <= TARGET.waveBeatP99Ms,
    }),
    line('fleet: calls failed (check-outs and heartbeats)', 'calls', failed, {
      target: '= 0',
      pass: failed === 0,
    }),
    line('fleet: copies whose lease was lost', 'leases', f.lost, { target: '= 0', pass: f.lost === 0 }),
    line('fleet: live leases of the fleet after the run', 'leases', f.fleetLive, {
      target: `= ${n(f.machines)}`,
      pass: f.fleetLive === f.machines,
    }),
    line(
      "fleet: live leases of the wave's license after it, one more check-out refused",
      'leases',
      f.waveLive,
      {
        target: `= ${n(wave)}, refused`,
        pass: f.waveLive === wave && f.extraRefused,
      },
    ),
    line('fleet: licenses over their seats', 'licenses', f.overGranted, {
      target: '= 0',
      pass: f.overGranted === 0,
    }),
  ];
}

const perCallText = (c: PerCall) =>
  `Keyward ${(c.keywardCpuMs * 1000).toFixed(0)} µs, PostgreSQL ${(c.postgresCpuMs * 1000).toFixed(0)} µs, ` +
  `load generator ${(c.loadCpuMs * 1000).toFixed(0)} µs, WAL ${c.ownWalBytes?.toFixed(0) ?? '?'} B, rows ${[
    ...c.rowsByTable,
  ]
    .filter(([, w]) => Math.abs(w.inserted) + Math.abs(w.updated) + Math.abs(w.deleted) >= 0.0005)
    .map(
      ([t, w]) =>
        `${t} +${w.inserted.toFixed(3)} ~${w.updated.toFixed(3)} (HOT ${w.hotUpdated.toFixed(3)}) -${w.deleted.toFixed(3)}`,
    )
    .join(', ')}`;

/** The run in a few lines: every number the rows hold, with rows by table and the largest tables. */
export function fleetLog(f: FleetResult): string[] {
  const calls = (m: FleetResult['fill']) =>
    `${m.requests} in ${m.seconds.toFixed(1)} s (${m.requestsPerSecond.toFixed(0)}/s), p50 ${m.p50.toFixed(1)} ms, ` +
    `p99 ${m.p99.toFixed(1)} ms, ${m.failed} failed${m.firstFailure === '' ? '' : ` (${m.firstFailure})`}`;
  const s = f.steadyCosts;
  const beats = f.steady.requests;
  const busy = (c: Costs) => {
    const cores = (ms: number) => (ms / 1000 / c.seconds).toFixed(2);
    return (
      `the machine ${cores(c.machineBusyMs)} of ${cores(c.machineAllMs)} cores busy; Keyward ` +
      `${cores(c.keywardCpuMs)}, PostgreSQL ${cores(c.postgresCpuMs)}, load generator ${cores(c.loadCpuMs)}`
    );
  };
  const connections = (m: Map<string, number>) =>
    [...m]
      .filter(([, n]) => n >= 0.05)
      .map(([what, n]) => `${what} ${n.toFixed(1)}`)
      .join('; ');
  return [
    `fleet heartbeats: ${calls(f.steady)}; sent late p99 ${f.steady.lateP99.toFixed(1)} ms; ` +
      `${f.steady.skipped} not sent, the copy's last one unanswered; at most ${f.steady.peak} unanswered at once`,
    `fleet heartbeat, each: ${perCallText(f.heartbeat)}`,
    `fleet steady phase: ${busy(s)}; PostgreSQL per heartbeat by process: ${[...s.postgresByKind]
      .filter(([, ms]) => ms > 0)
      .map(([kind, ms]) => `${kind} ${((ms * 1000) / beats).toFixed(0)} µs`)
      .join(', ')}`,
    `fleet check-outs alone: ${calls(f.quiet)}`,
    `fleet check-out, each: ${perCallText(f.checkOut)}`,
    `fleet check-outs, the fleet beating: ${calls(f.fill)}`,
    `fleet steady phase, the bench database's connections on average: ${connections(f.steadyConnections)}`,
    `fleet 9:00 wave: ${calls(f.wave)}; heartbeats meanwhile p50 ${f.waveBeats.p50.toFixed(1)} ms, p99 ${f.waveBeats.p99.toFixed(1)} ms, at most ${f.waveBeats.peak} unanswered at once`,
    `fleet 9:00 wave: ${busy(f.waveCosts)}`,
    `fleet 9:00 wave, the bench database's connections on average: ${connections(f.waveConnections)}`,
    `fleet after: ${f.lost} lost${f.firstLost === '' ? '' : ` (${f.firstLost})`}, ${f.fleetLive} live of the fleet, ` +
      `${f.waveLive} of the wave, one more ${f.extraRefused ? 'refused' : 'NOT refused'}, ${f.overGranted} over their seats`,
    `fleet tables: ${f.tables.map((t) => `${t.table} ${(t.bytes / 2 ** 20).toFixed(1)} MB / ${t.rows} rows`).join(', ')}`,
  ];
}
