import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportLine } from '../../src/cli/demo/try-it.js';
import type { DemoFacts } from '../../src/cli/demo/load-demo.js';
import { runDemoJson, startDemoServer, type DemoServer } from './support/demo-server.js';
import { startShellSession, type ShellSession } from './support/shell-session.js';
import {
  commandLines,
  differences,
  operationOf,
  parseDocumented,
  TOUR_RECEIVER,
  TOUR_SERVER,
  tourSteps,
  PROGRAM_SECTIONS,
  sectionBlocks,
  stateChanges,
  textFits,
  type TourStep,
  WEBHOOKS_SECTION,
} from './support/tour.js';

// The tour (docs/tour.md), run as a reader runs it: a real server started with the README's
// quick-start command, `keyward demo` against it, the lines it prints pasted into one shell, then
// every ```sh block of the tour pasted into that shell, in order, and then all of them again, as
// the tour says they can be. Each answer must fit the one the tour shows, so the tour cannot go
// stale unnoticed.
const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const steps = tourSteps(read('docs/tour.md'));
/** The tour's set-up, before its first section: the blocks that make its folder. */
const setup = [
  ...read('docs/tour.md')
    .slice(0, read('docs/tour.md').indexOf('\n## '))
    .matchAll(/```sh\n([\s\S]*?)```/g),
].map((match) => match[1] ?? '');
const programSteps = steps.filter((s) =>
  PROGRAM_SECTIONS.some((section) => s.label.startsWith(`${section}: `)),
);
const apiSteps = steps.filter((s) => !programSteps.includes(s));
const operationSteps = apiSteps.filter((s) => !s.label.startsWith(`${WEBHOOKS_SECTION}: `));
/** The webhooks section's step that shows the receiver's verified event. */
const arrival = apiSteps.find(
  (s) => s.label.startsWith(`${WEBHOOKS_SECTION}: `) && s.label.includes('arrives'),
);
const quickStart = quickStartCommand(read('README.md'));

/** The operations of the two interface documents and DOMAIN.md's additions, in their order. */
const SPEC_ORDER = [
  'POST /order/api/order/v1/enterprise/user/bind',
  'POST /order/api/order/v1/enterprise/user/create',
  'GET /order/api/order/v1/enterprise/user/query',
  'POST /order/api/order/v1/enterprise/user/update',
  'POST /order/api/order/v1/licenseOrder/batchOrder',
  'POST /order/api/order/v1/asset/lock',
  'POST /order/api/order/v1/asset/unlock',
  'GET /order/api/order/v1/asset/{}/list',
  'POST /order/api/order/v1/shellnums',
  'GET /order/api/order/v1/licenseOrder/{}',
  'POST /me/api/v1/enterprise/{}/member',
  'PUT /me/api/v1/enterprise/{}/member/{}',
  'PUT /me/api/v1/enterprise/{}/member/{}/resetPassword',
  'DELETE /me/api/v1/enterprise/{}/member/{}',
  'GET /me/api/v1/enterprise/{}/members',
  'GET /me/api/v1/enterprise/{}/asset/assetNums',
  'GET /me/api/v1/enterprise/asset/{}/merchandiseProducts',
  'GET /me/api/v1/enterprise/{}/asset/borrowUsbKeys',
  'POST /me/api/v1/enterprise/member/{}/privileges',
  'POST /me/api/v1/enterprise/member/{}/borrow',
  'POST /me/api/v1/enterprise/member/{}/return',
];
const ADD_MEMBERS = 'POST /me/api/v1/enterprise/{}/member';

let live: DemoServer;
let facts: DemoFacts;
let shell: ShellSession;
let workDir: string | undefined;
/** The server's PORT: never the default 8080, so an example that falls back on it fails. */
let port: number;
/** The folder the tour's set-up made and printed. */
let tourDir = '';
/** Each step's answer on the first run, to see what a second run shows differently. */
const firstAnswers = new Map<TourStep, unknown>();

beforeAll(async () => {
  // Started with the settings of the README's quick start, and no others: the tour's webhooks
  // section must work on that server. Test servers send no webhooks unless told (TEST_ENV), which
  // a reader's server does not share: this one must.
  port = await freePort();
  live = await startDemoServer({ ...quickStart.env, WEBHOOK_WORKER: '1', PORT: String(port) });
  facts = await runDemoJson(live);
  // The shell finds the test server the way a reader's finds another one: by KEYWARD_URL, and the
  // receiver by RECEIVER, on a port no other test file holds.
  // Its TMPDIR, where the receiver's events go, is the run's own.
  workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-tour-'));
  shell = startShellSession({
    // As a reader runs `keyward` where the server keeps its admin key (the tour's activation step).
    KEYWARD_ADMIN_KEY: live.cliEnv.KEYWARD_ADMIN_KEY ?? '',
    KEYWARD_URL: live.server.url,
    RECEIVER: `http://127.0.0.1:${await freePort()}/keyward`,
    TMPDIR: workDir,
  });
  // What the tour tells a reader to paste: the demo's "Try it" logins and its tour variables.
  const pasted = await shell.run(
    [facts.curl.server, facts.curl.token, facts.curl.userToken, exportLine(facts.tour)].join('\n'),
  );
  expect(pasted.code, pasted.stderr).toBe(0);
  const tokens = await shell.run('test -n "$TOKEN" && test -n "$USER_TOKEN"');
  expect(tokens.code, "the demo's login lines set $TOKEN and $USER_TOKEN").toBe(0);
  expect(setup).toHaveLength(1);
  const made = await shell.run(setup.join('\n'));
  expect(made.code, made.stderr).toBe(0);
  tourDir = /^the tour's files: (.+)$/m.exec(made.stdout)?.[1] ?? '';
  // A fresh folder under the shell's TMPDIR, named at the start.
  expect(path.dirname(tourDir)).toBe(workDir);
  expect(fs.readdirSync(tourDir)).toEqual([]);
});
afterAll(async () => {
  await shell?.close();
  // A relay the tour started and a failed step left running goes with the test.
  if (tourDir !== '') spawnSync('pkill', ['-f', `relay serve --dir ${tourDir}/relay`]);
  await live?.stop();
  if (workDir !== undefined) fs.rmSync(workDir, { recursive: true, force: true });
});

describe('the tour', () => {
  it('shows one example per operation, in the order of the interface documents', () => {
    expect(operationSteps.map((s) => operationOf(s.command))).toEqual(SPEC_ORDER);
  });

  it('covers every order-service and member-center operation the server documents', async () => {
    const document = (await (await fetch(`${live.server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const served = Object.entries(document.paths).flatMap(([route, methods]) =>
      route.startsWith('/order/') || route.startsWith('/me/')
        ? Object.keys(methods).map((m) => `${m.toUpperCase()} ${route.replace(/\{[^}]+\}/g, '{}')}`)
        : [],
    );
    expect(served.sort()).toEqual([...SPEC_ORDER].sort());
  });

  it('notices a program’s output that no longer fits the documented lines', () => {
    const documented = 'lease … (granted)\n…\nchecked in after …';
    expect(textFits(documented, 'lease 42 (granted)\nsolve 1\nsolve 2\nchecked in after 3 s')).toBe(true);
    expect(textFits(documented, 'lease 42 (resumed)\nchecked in after 3 s')).toBe(false);
    expect(textFits(documented, 'lease 42 (granted)\nsolve 1')).toBe(false);
  });

  it('notices an answer that no longer fits the documented one', () => {
    const documented = parseDocumented(
      '{"code":0,"message":"success","data":[{"assetNum":"8000000001", …}, …]}',
    );
    expect(
      differences(documented, { code: 0, message: 'success', data: [{ assetNum: '8', status: 1 }] }),
    ).toEqual([]);
    expect(differences(documented, { code: 0, message: 'success', data: [{ assetNo: '8' }] })).toEqual([
      'data[0].assetNum: documented, not in the answer',
    ]);
    expect(differences(documented, { code: '13004', message: 'size: must be >= 1', cause: '' })).toEqual([
      'code: documented 0, got "13004"',
      'message: documented "success", got "size: must be >= 1"',
      'data: documented data',
    ]);
    expect(differences(documented, { code: 0, message: 'success', data: null })).toEqual([
      'data: documented array, got null',
    ]);
  });

  it('starts from the README: its quick start is `npm ci && … npm start`, with the settings the webhooks need', () => {
    expect(quickStart.command).toMatch(/^npm ci && (\w+=\S+ )*npm start$/);
    expect(quickStart.env).toMatchObject({ WEBHOOK_ALLOW_HTTP: '1', WEBHOOK_ALLOW_PRIVATE: '1' });
    expect(arrival).toBeDefined();
  });
});

for (const pass of ['once', 'again'] as const) {
  describe(`the tour, run ${pass}`, () => {
    for (const step of steps) {
      if (programSteps.includes(step)) {
        // It builds the C SDK the first time: minutes on a busy machine.
        it(step.label, { timeout: 300_000 }, async () => {
          const run = await shell.run(step.command);
          expect(run.code, run.stderr).toBe(0);
          expect(
            textFits(step.documented, run.stdout.trimEnd()),
            `${step.documented}\n---\n${run.stdout}`,
          ).toBe(true);
        });
        continue;
      }
      it(step.label, async () => {
        const run = await shell.run(step.command);
        expect(run.code, run.stderr).toBe(0);
        const answer = JSON.parse(run.stdout) as { data?: { succeeded?: Array<{ globalId: string }> } };
        expect(differences(parseDocumented(step.documented), answer), run.stdout).toEqual([]);
        if (pass === 'once') firstAnswers.set(step, answer);
        else {
          // What a second run shows differently, the tour's text says: a reader compares.
          const changed = stateChanges(firstAnswers.get(step), answer);
          if (changed.length > 0) {
            expect(step.prose, `a second run shows ${changed.join('; ')}`).toMatch(/second run/);
          }
        }
        if (step === arrival) {
          // What the receiver printed is what it verified: this run's async order's own completion.
          const ordered = await shell.run('printf %s "$ORDER_ID"');
          expect(ordered.stdout).toMatch(/^shop-order-[0-9a-f]{8}$/);
          expect(answer).toMatchObject({ type: 'order.completed', data: { channelOrderId: ordered.stdout } });
        }
        if (operationSteps.includes(step) && operationOf(step.command) === ADD_MEMBERS) {
          // The step itself names the added employee's globalId $MEMBER for the steps that follow.
          const member = await shell.run('printf %s "$MEMBER"');
          expect(member.stdout).toBe(answer.data?.succeeded?.[0]?.globalId);
        }
      });
    }
  });
}

describe("the tour's files", () => {
  it('are all in the folder its set-up made, none beside it in TMPDIR', () => {
    expect(fs.readdirSync(tourDir).sort()).toEqual([
      'answer.txt',
      'grant.jwt',
      'modeler',
      'received.jsonl',
      'relay',
      'relay-machine',
      'relay.log',
      'vendor-jwks.json',
    ]);
    // Not the fixed names in the shared temporary folder it used to write.
    const shared = fs.readdirSync(workDir ?? '');
    for (const name of ['received.jsonl', 'answer.txt', 'keyward-modeler'])
      expect(shared).not.toContain(name);
    expect(read('docs/tour.md').match(/\$\{TMPDIR:-\/tmp\}/g)).toHaveLength(1);
  });
});

describe(`the README's first steps, pasted as they are, on PORT ${'$'}PORT (not 8080)`, () => {
  const blocks = sectionBlocks(read('README.md'), '## First steps: an owner, an application and a token');
  let reader: ShellSession | undefined;
  afterAll(async () => reader?.close());

  // Each block starts the CLI and curl in a shell: a loaded machine needs more than the default.
  it(
    'set up an owner, an application and both tokens after the line the demo printed',
    { timeout: 120_000 },
    async () => {
      expect(port).not.toBe(8080);
      expect(facts.curl.server).toBe(`export KEYWARD_URL=http://127.0.0.1:${port}`);
      const home = fs.mkdtempSync(path.join(workDir ?? os.tmpdir(), 'reader-'));
      // A reader's terminal: PORT exported, no KEYWARD_URL until the printed line is pasted; the
      // admin key is the server's, as the CLI finds it in ./data beside a reader's server.
      reader = startShellSession({
        PORT: String(port),
        KEYWARD_URL: '',
        KEYWARD_ADMIN_KEY: live.cliEnv.KEYWARD_ADMIN_KEY ?? '',
        XDG_CONFIG_HOME: home,
        ACCOUNT: facts.admin.account,
        PASSWORD: facts.admin.password,
      });
      expect((await reader.run(facts.curl.server)).code).toBe(0);
      expect(blocks.length).toBeGreaterThanOrEqual(4);
      for (const block of blocks) {
        const lines = block.split('\n');
        let split = lines.length;
        while (split > 0 && lines[split - 1]?.startsWith('#')) split -= 1;
        const run = await reader.run(lines.slice(0, split).join('\n'));
        expect(run.code, `${block}\n${run.stderr}`).toBe(0);
        expect(run.stderr, block).not.toMatch(/curl: \(\d+\)/);
        const documented = lines
          .slice(split)
          .map((line) => line.replace(/^# ?/, ''))
          .join('\n');
        if (documented.startsWith('{')) {
          expect(differences(parseDocumented(documented), JSON.parse(run.stdout)), run.stdout).toEqual([]);
        }
      }
      const tokens = await reader.run(
        'for t in "$TOKEN" "$USER_TOKEN"; do test -n "$t" && test "$t" != null || exit 1; done',
      );
      expect(tokens.code, 'the README sets $TOKEN and $USER_TOKEN').toBe(0);
    },
  );

  it('say on stderr when the server does not answer, or $KEYWARD_URL is not set', async () => {
    if (reader === undefined) throw new Error('the first steps did not run');
    const token = blocks.find((b) => b.startsWith('TOKEN=$(curl')) ?? '';
    const refused = await reader.run(`(KEYWARD_URL=http://127.0.0.1:9; ${token})`);
    expect(refused.stderr).toMatch(/curl: \(7\) Failed to connect/);
    const unset = await reader.run(`(unset KEYWARD_URL; ${token})`);
    expect(unset.stderr).toMatch(/curl: \(3\)/);
  });
});

describe('the README and docs/', () => {
  const pages = [
    'README.md',
    ...fs
      .readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((file) => file.endsWith('.md'))
      .map((file) => path.join('docs', file)),
  ];

  it('keeps the README to one sitting: under 250 lines', () => {
    expect(read('README.md').trimEnd().split('\n').length).toBeLessThan(250);
  });

  it(`name the server in every shell command as "${TOUR_SERVER}", set by one export line`, () => {
    // The README's quick start shows the line the server and the demo print; it is the only one.
    const exports = (lines: string[]) => lines.filter((line) => /^export KEYWARD_URL=/.test(line.trim()));
    expect(exports(commandLines(read('README.md')))).toHaveLength(1);
    for (const page of pages) {
      const literal = commandLines(read(page)).filter(
        (line) =>
          !exports([line]).length &&
          /https?:\/\//.test(line.replaceAll(TOUR_SERVER, '').replaceAll(TOUR_RECEIVER, '')),
      );
      expect(literal, page).toEqual([]);
      // No fallback to a default server: with PORT set, it quietly called another one.
      expect(read(page), page).not.toContain('${KEYWARD_URL:-');
    }
    for (const line of commandLines(read('README.md')).filter((l) => /\bcurl\b/.test(l))) {
      expect(line, 'a README curl fails loudly').toContain('curl -sS --fail-with-body');
    }
  });

  it('link only to files and headings that exist', () => {
    for (const page of pages) {
      for (const [, target = ''] of read(page).matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue;
        const [file = '', anchor] = target.split('#');
        const linked = file === '' ? page : path.join(path.dirname(page), file);
        expect(fs.existsSync(path.join(ROOT, linked)), `${page} links ${target}`).toBe(true);
        if (anchor !== undefined && linked.endsWith('.md')) {
          expect(anchorsOf(read(linked)), `${page} links ${target}`).toContain(anchor);
        }
      }
    }
  });
});

/**
 * The README's quick-start line that starts the server (the first ```sh block under "Quick
 * start"), without its comment, and the variables the tour needs on `npm start`: those the line
 * sets, and those the section says to start the server with for the tour's webhooks.
 */
function quickStartCommand(readme: string): { command: string; env: Record<string, string> } {
  const section = readme.slice(readme.indexOf('\n## Quick start\n'));
  const block = /```sh\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  const command = (block.split('\n').find((line) => /\bnpm start\b/.test(line)) ?? '')
    .replace(/\s+# .*$/, '')
    .trim();
  const env: Record<string, string> = {};
  // The settings the tour's webhooks need, where the quick start says to start the server with them.
  const tourStart = /`((?:[A-Z_][A-Z0-9_]*=\S+ )+)npm start`/.exec(section)?.[1] ?? '';
  for (const word of `${tourStart} ${(command.split('&&').at(-1) ?? '').trim()}`.trim().split(/\s+/)) {
    const assignment = /^([A-Z_][A-Z0-9_]*)=(\S*)$/.exec(word);
    if (assignment === null) break;
    env[assignment[1] as string] = assignment[2] as string;
  }
  return { command, env };
}

/** A port nothing listens on now: the system's pick for a listener closed at once. */
async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as net.AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** The anchors a Markdown renderer gives a page's headings (GitHub's rule, without duplicates). */
function anchorsOf(markdown: string): string[] {
  return [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map(([, heading = '']) =>
    heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-'),
  );
}
