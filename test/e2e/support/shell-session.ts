import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ProcessResult } from '../../support/server-process.js';

export interface ShellSession {
  /** Runs shell text in the session, as pasted into one terminal: variables it sets stay set. */
  run(script: string): Promise<ProcessResult>;
  close(): Promise<void>;
}

/**
 * One bash for a whole run of pastes, like a reader's terminal. Each paste is sourced from a file
 * of its own with stdin from /dev/null (so a command cannot swallow the next paste), then a random
 * marker on both streams, with the paste's status, tells where its output ends.
 */
export function startShellSession(env: Record<string, string>): ShellSession {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-shell-'));
  const bash = spawn('bash', ['--noprofile', '--norc'], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let exited = false;
  let wake = () => {};
  bash.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    wake();
  });
  bash.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    wake();
  });
  bash.on('close', () => {
    exited = true;
    wake();
  });
  let pastes = 0;

  return {
    run(script) {
      pastes += 1;
      const file = path.join(dir, `paste-${pastes}.sh`);
      fs.writeFileSync(file, `${script}\n`);
      const marker = `--end-of-paste-${randomBytes(8).toString('hex')}--`;
      stdout = '';
      stderr = '';
      return new Promise((resolve, reject) => {
        const ends = new RegExp(`\\n${marker} (\\d+)\\n`);
        wake = () => {
          const done = ends.exec(stdout);
          if (done !== null && stderr.includes(`${marker}\n`)) {
            wake = () => {};
            resolve({
              code: Number(done[1]),
              stdout: stdout.slice(0, done.index),
              stderr: stderr.slice(0, stderr.indexOf(`${marker}\n`)),
            });
          } else if (exited) {
            reject(new Error(`the shell ended during a paste:\n${stdout}\n${stderr}`));
          }
        };
        bash.stdin.write(
          `source '${file}' </dev/null; printf '\\n%s %d\\n' '${marker}' "$?"; printf '%s\\n' '${marker}' >&2\n`,
        );
      });
    },
    async close() {
      if (!exited) {
        const closed = new Promise<void>((resolve) => bash.once('close', () => resolve()));
        bash.stdin.end();
        await closed;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
