import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { format, resolveConfig } from 'prettier';
import { MISSED_BECAUSE } from './missed.js';

/** One line of RESULTS.md: a measurement, what it is compared with, and the target. */
export interface ResultRow {
  scenario: string;
  database: 'postgres' | 'embedded';
  /** "req/s", "rows/s", "events/s", "events", "ms" or "MB": what `value` counts. */
  unit: string;
  value: number;
  p50: number | null;
  p99: number | null;
  reference: string | null;
  referenceValue: number | null;
  /** value / referenceValue (or the measured quantity the target bounds). */
  ratio: number | null;
  target: string | null;
  pass: boolean | null;
}

export interface Report {
  startedAt: string;
  finishedAt: string;
  machine: { cpus: number; cpuModel: string; memoryGb: number; node: string; postgres: string };
  settings: Record<string, unknown>;
  rows: ResultRow[];
}

const ROOT = path.resolve(import.meta.dirname);

const fixed = (n: number | null, digits: number) => (n === null || Number.isNaN(n) ? '' : n.toFixed(digits));

function valueText(row: ResultRow): string {
  const digits = ['req/s', 'rows/s', 'events/s', 'events', 'MB'].includes(row.unit) ? 0 : 1;
  return `${fixed(row.value, digits)} ${row.unit}`;
}

function verdict(pass: boolean | null): string {
  if (pass === null) return '';
  return pass ? 'pass' : '**fail**';
}

export function machine(postgres: string): Report['machine'] {
  const cpus = os.cpus();
  return {
    cpus: cpus.length,
    cpuModel: cpus[0]?.model ?? 'unknown',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres,
  };
}

/** The rows of the last full run (bench/results/latest.json), or none. */
export function readPrevious(): ResultRow[] {
  try {
    const last = JSON.parse(fs.readFileSync(path.join(ROOT, 'results', 'latest.json'), 'utf8')) as Report;
    return last.rows;
  } catch {
    return [];
  }
}

function previousText(row: ResultRow, previous: readonly ResultRow[]): string {
  const before = previous.find((p) => p.scenario === row.scenario && p.database === row.database);
  return before === undefined ? '' : valueText(before);
}

/** Each missed target with why, where MISSED_BECAUSE knows; nothing when every target is met. */
function missedLines(rows: readonly ResultRow[]): string[] {
  const missed = rows.filter((r) => r.pass === false);
  if (missed.length === 0) return [''];
  return [
    '',
    'Missed targets, and why:',
    '',
    ...missed.map(
      (r) => `- ${r.scenario} (${r.database}): ${MISSED_BECAUSE[r.scenario] ?? 'not yet profiled.'}`,
    ),
    '',
  ];
}

function markdown(report: Report, previous: readonly ResultRow[]): string {
  const m = report.machine;
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run.ts) on ${report.finishedAt}. Raw numbers: \`bench/results/latest.json\`.`,
    '',
    `Machine: ${m.cpus} × ${m.cpuModel}, ${m.memoryGb} GB, Node.js ${m.node}, ${m.postgres}. The load generator,`,
    'the server and the database share these cores, so compare ratios measured in the same run, not',
    'absolute numbers across machines. Latencies are in milliseconds. Where the CPU goes, and what',
    "would reach each missed target: `bench/PROFILES.md`. Each SDK's offline lease verification, timed in",
    'its own language: `bench/SDKS.md` (`npx tsx bench/sdks.ts`).',
    '',
    '| scenario | db | result | previous | p50 | p99 | reference | ratio | target | verdict |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...report.rows
      .map((r) =>
        [
          r.scenario,
          r.database === 'postgres' ? 'pg' : 'embedded',
          valueText(r),
          previousText(r, previous),
          fixed(r.p50, 1),
          fixed(r.p99, 1),
          r.reference ?? '',
          fixed(r.ratio, 2),
          r.target ?? '',
          verdict(r.pass),
        ].join(' | '),
      )
      .map((l) => `| ${l} |`),
    ...missedLines(report.rows),
    'Settings:',
    '',
    ...Object.entries(report.settings).map(
      ([k, v]) => `- ${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`,
    ),
    '',
  ];
  return lines.join('\n');
}

/**
 * bench/RESULTS.md (formatted as the repository's prettier check wants it) and the raw JSON; the
 * "previous" column is the run this one replaces.
 */
export async function writeReport(report: Report, previous: readonly ResultRow[]): Promise<string> {
  const dir = path.join(ROOT, 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  const file = path.join(ROOT, 'RESULTS.md');
  const options = (await resolveConfig(file)) ?? {};
  fs.writeFileSync(file, await format(markdown(report, previous), { ...options, parser: 'markdown' }));
  return file;
}

/** A partial run (--only): its table on stdout and its JSON in results/only.json, nothing else. */
export async function printReport(report: Report, previous: readonly ResultRow[]): Promise<string> {
  const dir = path.join(ROOT, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, 'only.json');
  fs.writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(await format(markdown(report, previous), { parser: 'markdown' }));
  return file;
}
