import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface Running {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilUp(url: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`process exited with ${child.exitCode}:\n${output()}`);
    try {
      const response = await fetch(`${url}/healthz`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`process did not start:\n${output()}`);
}

/** Runs a node entry point (TypeScript through tsx) as its own process and waits for /healthz. */
async function start(args: string[], env: Record<string, string>): Promise<Running> {
  const port = await freePort();
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitUntilUp(url, child, () => output);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    pid: child.pid ?? 0,
    async stop() {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/**
 * `keyward serve` as an operator runs it. Logging at `warn`: per-request info lines would measure
 * the log pipe rather than the server (R1 logs nothing either).
 */
export function startKeyward(env: Record<string, string>): Promise<Running> {
  // BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops (bench/profile.ts
  // turns it into a top-frames table).
  const profileDir = process.env.BENCH_CPU_PROF;
  const profiling = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(profileDir)}`] : [];
  return start([...profiling, path.join(ROOT, 'bin/keyward.js'), 'serve'], {
    LOG_LEVEL: 'warn',
    // The per-app limit still counts every call; it is only raised above what the bench sends.
    RATE_LIMIT_PER_MINUTE: '100000000',
    // The runtime copies the bench drives call far faster than a real machine: a brake for
    // misbehaving copies would measure the brake.
    RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE: '0',
    ...env,
  });
}

/** R1: the bare Fastify server of reference-server.ts. */
export function startReference(databaseUrl: string): Promise<Running> {
  return start(['--import', 'tsx', path.join(ROOT, 'bench/reference-server.ts')], {
    DATABASE_URL: databaseUrl,
  });
}

/** A Prometheus text metric's value (the first sample of that name). */
export function metricValue(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

export async function scrapeMetrics(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  return response.text();
}
