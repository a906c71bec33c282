import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemoJson, runShell, startDemoServer, type DemoServer } from './support/demo-server.js';
import {
  differences,
  operationOf,
  parseDocumented,
  README_BASE_URL,
  tourBlocks,
} from './support/readme-tour.js';

// The README's tour, run as a reader runs it: `keyward demo` against a real server, its variables
// exported, then every ```sh block of the Tour through bash and the real curl, in order. Each
// answer must fit the one the README shows, so the README cannot go stale unnoticed.
const README = fs.readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
const blocks = tourBlocks(README);

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
let variables: Record<string, string>;

beforeAll(async () => {
  live = await startDemoServer();
  const facts = await runDemoJson(live);
  // The tokens come from the demo's own "Try it" lines, as the README tells a reader.
  const tokens = await runShell(
    [facts.curl.token, facts.curl.userToken, 'printf "%s %s" "$TOKEN" "$USER_TOKEN"'].join('\n'),
  );
  const [TOKEN = '', USER_TOKEN = ''] = tokens.stdout.split(' ');
  variables = { ...facts.tour, TOKEN, USER_TOKEN };
});
afterAll(async () => live?.stop());

describe('the README tour', () => {
  it('shows one example per operation, in the order of the interface documents', () => {
    expect(blocks.map((b) => operationOf(b.command))).toEqual(SPEC_ORDER);
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

  for (const block of blocks) {
    it(block.label, async () => {
      const run = await runShell(block.command.replaceAll(README_BASE_URL, live.server.url), variables);
      expect(run.code, run.stderr).toBe(0);
      const answer = JSON.parse(run.stdout) as { data?: { succeeded?: Array<{ globalId: string }> } };
      expect(differences(parseDocumented(block.documented), answer), run.stdout).toEqual([]);
      // The README names the added employee's globalId $MEMBER for the calls that follow.
      if (operationOf(block.command) === ADD_MEMBERS) {
        variables.MEMBER = answer.data?.succeeded?.[0]?.globalId ?? '';
      }
    });
  }
});
