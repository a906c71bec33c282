import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { TEST_ENV } from './test-env.js';

const BIN = path.resolve(import.meta.dirname, '../../bin/keyward.js');

/**
 * A fresh embedded server runs initdb and every migration before it listens: seconds alone, but
 * far longer on a shared 2-core machine under two test workers. This only guards a server that
 * never starts, so it is generous.
 */
const START_LIMIT_MS = 90_000;

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  /** Resolves once the output matches `pattern` (the start banner comes after "listening"). */
  waitFor(pattern: RegExp): Promise<RegExpExecArray>;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `keyward serve` (or `args`, such as `relay serve`) as a real process on a free port and
 * waits until it listens; `bin` runs another copy of the code (an image's file tree); `cwd`, where
 * it runs (by default the copy's own folder).
 */
export async function startServerProcess(
  env: Record<string, string>,
  bin: string = BIN,
  args: string[] = ['serve'],
  cwd: string = path.dirname(path.dirname(bin)),
): Promise<ServerProcess> {
  const child = spawn(process.execPath, [bin, ...args], {
    cwd,
    // LOG_FORMAT unset whatever the caller's shell says: JSON lines, which tests read.
    env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', LOG_FORMAT: '', ...TEST_ENV, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind the failed test, holding its data directory and a core.
      child.kill('SIGKILL');
      reject(new Error(`server did not start:\n${output}`));
    }, START_LIMIT_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${output}`));
    });
  });
  return {
    url,
    child,
    output: () => output,
    waitFor: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(output);
          if (match === null) return false;
          child.stdout.off('data', onData);
          resolve(match);
          return true;
        };
        // Registered after the start's own listener: `output` already holds the chunk.
        const onData = () => void check();
        if (check()) return;
        child.stdout.on('data', onData);
        void exited.then(() => {
          if (!check()) reject(new Error(`server exited before printing ${pattern}:\n${output}`));
        });
      }),
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode;
      child.kill(signal);
      return exited;
    },
  };
}

export interface ProcessResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to completion, collecting what it printed. */
export function runProcess(
  command: string,
  args: string[],
  env: Record<string, string>,
  input?: string,
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      env: { ...process.env, ...env },
      stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
    // 'close', not 'exit': a process may exit before its piped output has all been read, and a
    // loaded machine then loses the end of it.
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Runs a `keyward` CLI command to completion. */
export function runCli(args: string[], env: Record<string, string>, input?: string): Promise<ProcessResult> {
  return runProcess(process.execPath, [BIN, ...args], env, input);
}
