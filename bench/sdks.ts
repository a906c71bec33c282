import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { format, resolveConfig } from 'prettier';
import { verifyLease, type JSONWebKeySet } from '../packages/client/src/index.js';

// `npx tsx bench/sdks.ts [--runs 3] [--calls 5000] [--only c,go,python,java,typescript]`: the
// offline lease verification of every SDK, each timed by its own program on the conformance suite's
// valid lease (sdks/conformance/leases.json) — N calls one by one after a warm-up, the median and
// p99 of the wall clock — in several runs one after another, never two at once. Builds what it
// runs (C with libsodium, the Go test binary, the Java classes); writes bench/SDKS.md and
// bench/results/sdks.json (with --only, prints the table instead). The table reports the median of
// the runs' medians and their range.

const ROOT = path.resolve(import.meta.dirname, '..');
const CONFORMANCE = path.join(ROOT, 'sdks', 'conformance');
const SDKS = ['c', 'go', 'python', 'java', 'typescript'] as const;
type Sdk = (typeof SDKS)[number];

const { values: flags } = parseArgs({
  options: {
    runs: { type: 'string', default: '3' },
    calls: { type: 'string', default: '5000' },
    only: { type: 'string' },
  },
});
const runs = Number(flags.runs);
const calls = Number(flags.calls);
const chosen = (flags.only?.split(',').map((s) => s.trim()) ?? [...SDKS]) as Sdk[];
const unknown = chosen.filter((s) => !(SDKS as readonly string[]).includes(s));
if (unknown.length > 0 || !(runs > 0) || !(calls > 0)) {
  console.error(`usage: bench/sdks.ts [--runs N] [--calls N] [--only ${SDKS.join(',')}]`);
  process.exit(2);
}

/** One line of an SDK's timing program, in the C benchmark's form. */
interface Timing {
  call: string;
  signature: 'verified' | 'remembered';
  clock: 'wall clock' | 'CPU time';
  calls: number;
  meanUs: number;
  medianUs: number;
  p99Us: number;
}

const LINE =
  /^(.+?), signature (verified|remembered)\s*, (wall clock|CPU time)\s*: (\d+) calls, mean ([\d.]+) us, median ([\d.]+) us, p99 ([\d.]+) us$/;

function timings(output: string): Timing[] {
  return output.split('\n').flatMap((line) => {
    const m = LINE.exec(line.trim());
    if (m === null) return [];
    return [
      {
        call: m[1]!,
        signature: m[2] as Timing['signature'],
        clock: m[3] as Timing['clock'],
        calls: Number(m[4]),
        meanUs: Number(m[5]),
        medianUs: Number(m[6]),
        p99Us: Number(m[7]),
      },
    ];
  });
}

const run = (command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
  execFileSync(command, args, {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, ...options.env },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 16 << 20,
  });

const GO_ENV = {
  GOTOOLCHAIN: 'local',
  GOFLAGS: '-mod=mod',
  GOPROXY: 'off',
  GOSUMDB: 'off',
  GOCACHE: path.join(ROOT, 'sdks/go/build/gocache'),
  GOPATH: path.join(ROOT, 'sdks/go/build/gopath'),
};
const JAVA_JARS = ['jackson-databind', 'jackson-core', 'jackson-annotations']
  .map((jar) => `/usr/share/java/${jar}.jar`)
  .join(':');
const JAVA_BUILD = path.join(ROOT, 'sdks/java/build/bench');

/** Each SDK: what it verifies with, how its timing program is built, and how it is run. */
const PROGRAMS: Record<Sdk, { ed25519: string; build: () => void; time: () => string }> = {
  c: {
    ed25519: 'libsodium',
    build: () => {
      run('cmake', [
        '-S',
        'sdks/c',
        '-B',
        'sdks/c/build',
        '-DCMAKE_BUILD_TYPE=Release',
        '-DKEYWARD_SODIUM=ON',
      ]);
      run('cmake', ['--build', 'sdks/c/build', '--target', 'test_vectors']);
    },
    time: () => run('sdks/c/build/tests/test_vectors', [CONFORMANCE, '--bench', String(calls)]),
  },
  go: {
    ed25519: 'crypto/ed25519',
    build: () => run('go', ['test', '-c', '-o', 'build/keyward.test', '.'], { cwd: 'sdks/go', env: GO_ENV }),
    time: () =>
      run(
        path.join(ROOT, 'sdks/go/build/keyward.test'),
        ['-test.run', '^TestVerifyLeaseTiming$', '-test.v'],
        {
          cwd: path.join(ROOT, 'sdks/go'),
          env: { KEYWARD_VERIFY_BENCH: String(calls), KEYWARD_CONFORMANCE_DIR: CONFORMANCE },
        },
      ),
  },
  python: {
    ed25519: 'cryptography (OpenSSL)',
    build: () => undefined,
    time: () =>
      run('/usr/bin/python3', ['sdks/python/tests/bench_verify.py', String(calls)], {
        env: { PYTHONPATH: path.join(ROOT, 'sdks/python/src'), KEYWARD_CONFORMANCE_DIR: CONFORMANCE },
      }),
  },
  java: {
    ed25519: 'the JDK (SunEC)',
    build: () => {
      fs.rmSync(JAVA_BUILD, { recursive: true, force: true });
      const sources = (dir: string) =>
        fs
          .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
          .filter((f) => f.endsWith('.java'))
          .map((f) => path.join(ROOT, dir, f));
      run('javac', [
        '--release',
        '17',
        '-encoding',
        'UTF-8',
        '-d',
        `${JAVA_BUILD}/main`,
        '-cp',
        JAVA_JARS,
        ...sources('sdks/java/src/main/java'),
      ]);
      const test = (name: string) => path.join(ROOT, 'sdks/java/src/test/java/dev/keyward', name);
      run('javac', [
        '--release',
        '17',
        '-encoding',
        'UTF-8',
        '-d',
        `${JAVA_BUILD}/test`,
        '-cp',
        `${JAVA_BUILD}/main:${JAVA_JARS}`,
        test('Conformance.java'),
        test('VerifyBench.java'),
      ]);
    },
    time: () =>
      [[], ['--signature-only']]
        .map((extra) =>
          run('java', [
            `-Dkeyward.conformance=${CONFORMANCE}`,
            '-cp',
            `${JAVA_BUILD}/test:${JAVA_BUILD}/main:${JAVA_JARS}`,
            'dev.keyward.VerifyBench',
            String(calls),
            ...extra,
          ]),
        )
        .join('\n'),
  },
  typescript: {
    ed25519: 'WebCrypto (Node.js)',
    build: () => undefined,
    time: () => '', // in this process: timeTypeScript
  },
};

/** verifyLease of @keyward/client, in this process, timed as the others time theirs. */
async function timeTypeScript(): Promise<string> {
  const vectors = JSON.parse(fs.readFileSync(path.join(CONFORMANCE, 'leases.json'), 'utf8')) as {
    jwks: JSONWebKeySet;
    cases: { name: string; token: string; fingerprint: string; audience: string; now: number }[];
  };
  const valid = vectors.cases.find((c) => c.name === 'valid');
  if (valid === undefined) throw new Error('no case named valid');
  const options = {
    jwks: vectors.jwks,
    fingerprint: valid.fingerprint,
    audience: valid.audience,
    now: new Date(valid.now * 1000),
  };
  for (let i = 0; i < 2000; i++) await verifyLease(valid.token, options);
  const wall: number[] = [];
  for (let i = 0; i < calls; i++) {
    const start = process.hrtime.bigint();
    await verifyLease(valid.token, options);
    wall.push(Number(process.hrtime.bigint() - start) / 1000);
  }
  wall.sort((a, b) => a - b);
  const mean = wall.reduce((a, b) => a + b, 0) / calls;
  const median = calls % 2 === 1 ? wall[(calls - 1) / 2]! : (wall[calls / 2 - 1]! + wall[calls / 2]!) / 2;
  return `verifyLease, signature verified, wall clock: ${calls} calls, mean ${mean.toFixed(1)} us, median ${median.toFixed(1)} us, p99 ${wall[Math.floor(calls * 0.99)]!.toFixed(1)} us`;
}

interface Row {
  sdk: Sdk;
  ed25519: string;
  call: string;
  signature: Timing['signature'];
  /** The median of each run, in µs, in run order. */
  medians: number[];
  p99s: number[];
}

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const rows: Row[] = [];
const startedAt = new Date().toISOString();
const loads: number[] = [];
for (const sdk of chosen) {
  const program = PROGRAMS[sdk];
  console.log(`== ${sdk}: building`);
  program.build();
  for (let r = 0; r < runs; r++) {
    loads.push(os.loadavg()[0]!);
    const output = sdk === 'typescript' ? await timeTypeScript() : program.time();
    for (const t of timings(output).filter((t) => t.clock === 'wall clock')) {
      console.log(
        `${sdk} run ${r + 1}: ${t.call}, signature ${t.signature}: median ${t.medianUs} µs, p99 ${t.p99Us} µs`,
      );
      let row = rows.find((x) => x.sdk === sdk && x.call === t.call && x.signature === t.signature);
      if (row === undefined) {
        row = { sdk, ed25519: program.ed25519, call: t.call, signature: t.signature, medians: [], p99s: [] };
        rows.push(row);
      }
      row.medians.push(t.medianUs);
      row.p99s.push(t.p99Us);
    }
  }
}

const cpus = os.cpus();
const machine = `${cpus.length} × ${cpus[0]?.model ?? 'unknown'}, ${Math.round(os.totalmem() / 2 ** 30)} GB`;
const fixed = (n: number) => n.toFixed(0);
const range = (values: readonly number[]) =>
  values.length === 1 ? fixed(values[0]!) : `${fixed(Math.min(...values))}–${fixed(Math.max(...values))}`;
const markdown = [
  '# SDK lease verification',
  '',
  `Written by \`npx tsx bench/sdks.ts\` on ${new Date().toISOString()} (started ${startedAt}).`,
  'Raw numbers: `bench/results/sdks.json`.',
  '',
  `Machine: ${machine}; load average ${Math.min(...loads).toFixed(2)}–${Math.max(...loads).toFixed(2)} while it ran`,
  '(other work shares the cores: compare rows of one run, not runs). Each SDK verifies the conformance',
  "suite's valid lease (`sdks/conformance/leases.json`) with its own program, claims made and checked",
  `as a program uses them: ${calls} calls one by one after a warm-up, in ${runs} runs one after another;`,
  "the median of the runs' medians, each run's median, and the range of the p99s, in microseconds of",
  'wall clock. "Remembered": the key set keeps the last 16 signatures it verified (C and Java), so',
  'checking the same lease again costs a hash instead of an Ed25519 verification; every claim is still',
  "judged. Java's first verification is the JDK's Ed25519 (its `Signature.verify` alone costs as much):",
  'why, and what would bring it to 150 µs, in `bench/PROFILES.md` ("Java lease verification").',
  '',
  '| SDK | call | Ed25519 by | signature | median µs | medians of the runs | p99 µs |',
  '| --- | --- | --- | --- | --- | --- | --- |',
  ...rows.map(
    (r) =>
      `| ${r.sdk} | \`${r.call}\` | ${r.ed25519} | ${r.signature} | ${fixed(median(r.medians))} | ${r.medians.map(fixed).join(', ')} | ${range(r.p99s)} |`,
  ),
  '',
].join('\n');

const file = path.join(ROOT, 'bench', 'SDKS.md');
const options = (await resolveConfig(file)) ?? {};
const table = await format(markdown, { ...options, parser: 'markdown' });
if (flags.only === undefined) {
  fs.writeFileSync(file, table);
  fs.mkdirSync(path.join(ROOT, 'bench', 'results'), { recursive: true });
  fs.writeFileSync(
    path.join(ROOT, 'bench', 'results', 'sdks.json'),
    `${JSON.stringify({ startedAt, finishedAt: new Date().toISOString(), machine, loads, calls, runs, rows }, null, 2)}\n`,
  );
  console.log(`wrote ${path.relative(ROOT, file)}`);
} else {
  console.log(table); // a partial run leaves the full run's files alone
}
