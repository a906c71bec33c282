import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keywardCli } from '../../src/cli/cli.js';
import { testDatabaseUrl } from '../support/database.js';
import { runCli, type ProcessResult } from '../support/server-process.js';

// The CLI's help, version and mistakes, as real processes. Every command is found by walking the
// CLI itself, so a command added later is covered too. Nothing here may start a server, migrate or
// touch DATA_DIR: the environment points at a folder that must still not exist at the end, and at
// the run's database on the PostgreSQL pass.
let scratch: string;
let env: Record<string, string>;

const PACKAGE_VERSION = (
  JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as {
    version: string;
  }
).version;

/** Every command's words after `keyward`: [], ['serve'], …, ['app', 'create'], … */
function commandPaths(command: Command, above: string[] = []): string[][] {
  return [above, ...command.commands.flatMap((c) => commandPaths(c, [...above, c.name()]))];
}
const PATHS = commandPaths(keywardCli());
/** Whether `q` is a command below `p` (`operator token create` is below `operator token`). */
const below = (q: string[], p: string[]) => q.length > p.length && p.every((word, i) => q[i] === word);
const GROUPS = PATHS.filter((p) => p.length > 0 && PATHS.some((q) => below(q, p)));

/** Runs a few processes at a time: each loads the CLI afresh, and the machine has two cores. */
async function runAll(argvs: string[][]): Promise<ProcessResult[]> {
  const results: ProcessResult[] = [];
  for (let i = 0; i < argvs.length; i += 3) {
    results.push(...(await Promise.all(argvs.slice(i, i + 3).map((argv) => runCli(argv, env)))));
  }
  return results;
}

function expectHelp(result: ProcessResult, words: string[], argv: string[]): void {
  const label = `keyward ${argv.join(' ')}`;
  expect(result.code, `${label}\n${result.stderr}`).toBe(0);
  expect(result.stderr, label).toBe('');
  expect(result.stdout.split('\n')[0], label).toMatch(
    new RegExp(`^Usage: ${['keyward', ...words].join(' ')} \\[options\\]`),
  );
}

beforeAll(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-help-'));
  env = {
    DATA_DIR: path.join(scratch, 'data'),
    DATABASE_URL: testDatabaseUrl() ?? '',
    KEYWARD_ADMIN_KEY: '',
    KEYWARD_URL: 'http://127.0.0.1:9',
    PORT: '0',
  };
});
afterAll(() => {
  // The proof that no command ran: not even the folder was made.
  expect(fs.existsSync(path.join(scratch, 'data'))).toBe(false);
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('keyward --help', () => {
  it('knows the commands the README names', () => {
    expect(PATHS.map((p) => p.join(' '))).toEqual(
      expect.arrayContaining([
        'serve',
        'migrate',
        'status',
        'demo',
        'token',
        'audit',
        'app create',
        'app approve',
        'app list',
        'app disable',
        'app rotate-secret',
        'app set-offline-days',
        'enterprise show',
        'enterprise set-member-limit',
        'member set-password',
        'keys rotate',
        'keys list',
      ]),
    );
  });

  it('prints every command’s usage to stdout with --help and -h, exit 0', { timeout: 120_000 }, async () => {
    const argvs = PATHS.flatMap((words) => [
      [...words, '--help'],
      ...(words.length === 0 || words[0] === 'serve' ? [[...words, '-h']] : []),
    ]);
    const results = await runAll(argvs);
    argvs.forEach((argv, i) => expectHelp(results[i] as ProcessResult, argv.slice(0, -1), argv));
  });

  it(
    'prints it with help [command] at the top and in every group, exit 0',
    { timeout: 120_000 },
    async () => {
      const argvs = [
        ['help'],
        ...PATHS.filter((p) => p.length === 1).map((words) => ['help', ...words]),
        ['help', 'app', 'create'],
        ...GROUPS.flatMap((group) => [
          [...group, 'help'],
          ...PATHS.filter((p) => p.length === group.length + 1 && below(p, group)).map((p) => [
            ...group,
            'help',
            p[p.length - 1] as string,
          ]),
        ]),
      ];
      const results = await runAll(argvs);
      argvs.forEach((argv, i) => {
        const words = argv.filter((w) => w !== 'help');
        expectHelp(results[i] as ProcessResult, words, argv);
      });
    },
  );

  it('documents every option of every command', () => {
    const undocumented = PATHS.flatMap((words) => {
      let command: Command | undefined = keywardCli();
      for (const word of words) command = command?.commands.find((c) => c.name() === word);
      return (command?.options ?? [])
        .filter((o) => o.description.trim() === '')
        .map((o) => `${words.join(' ')} ${o.flags}`);
    });
    expect(undocumented).toEqual([]);
  });

  it('names the environment and an example in the top-level help', async () => {
    const result = await runCli(['--help'], env);
    for (const text of [
      'KEYWARD_URL',
      'KEYWARD_ADMIN_URL',
      'KEYWARD_ADMIN_KEY',
      'Examples:',
      'keyward demo',
    ]) {
      expect(result.stdout).toContain(text);
    }
  });
});

describe('keyward --version', () => {
  it("prints package.json's version, exit 0", async () => {
    for (const flag of ['--version', '-V']) {
      const result = await runCli([flag], env);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
    }
  });
});

describe('mistakes', () => {
  it('name an unknown command and suggest the closest, exit 1', async () => {
    const top = await runCli(['sevre'], env);
    expect(top.code).toBe(1);
    expect(top.stdout).toBe('');
    expect(top.stderr).toContain("keyward: unknown command 'sevre'");
    expect(top.stderr).toContain('(Did you mean serve?)');
    const sub = await runCli(['app', 'craete', '--name', 'x'], env);
    expect(sub.code).toBe(1);
    expect(sub.stderr).toContain("unknown command 'craete'");
    expect(sub.stderr).toContain('(Did you mean create?)');
  });

  it('name an unknown option and suggest the closest, exit 1, with one line saying where the help is', async () => {
    const result = await runCli(['audit', '--jsno'], env);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // The error stays in sight: three lines, not the command's whole help after it.
    expect(result.stderr.trimEnd().split('\n')).toEqual([
      "keyward: unknown option '--jsno'",
      '(Did you mean --json?)',
      '(keyward audit --help lists its options and examples)',
    ]);
    const nested = await runCli(['leases', 'offline', '--limt', '3'], env);
    expect(nested.stderr).toContain('(keyward leases offline --help lists its options and examples)');
    expect(nested.stderr).not.toContain('Usage:');
    const group = await runCli(['app', 'craete'], env);
    expect(group.stderr).toContain('(keyward app --help lists its commands)');
    const top = await runCli(['--verison'], env);
    expect(top.code).toBe(1);
    expect(top.stderr).toContain('(Did you mean --version?)');
  });

  it('show what a terminal would obey as escapes', async () => {
    const result = await runCli(['app', 'list', '--\u001b[2Jboom'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("unknown option '--\\x1b[2Jboom'");
    expect(result.stderr).not.toContain('\u001b');
  });

  it('refuse a bad --since before calling the server', async () => {
    const result = await runCli(['audit', '--since', 'yesterday'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("option '--since <TIME>' argument 'yesterday' is invalid");
  });
});
