import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActivationRequest,
  verifyActivation,
  type JSONWebKeySet,
} from '../../packages/client/src/index.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { runCli } from '../support/server-process.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// `keyward leases activate | offline`: the operator's offline activation from the command line.

let h: Harness;
let world: RuntimeWorld;
let cliEnv: Record<string, string>;
let dir: string;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 30);
  cliEnv = { KEYWARD_URL: await h.app.listen({ port: 0, host: '127.0.0.1' }), KEYWARD_ADMIN_KEY: ADMIN_KEY };
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-activation-cli-'));
});
afterAll(async () => {
  fs.rmSync(dir, { recursive: true, force: true });
  await h.close();
});

async function pending(fingerprint: string) {
  const l = await lockWith(world, { limitConcurrent: 2 });
  return createActivationRequest({
    appKey: world.app.appKey,
    assetNum: l.assetNum,
    crmProductId: l.crmProductId,
    days: 9,
    fingerprint,
  });
}

describe('keyward leases activate', () => {
  it('answers a request file with an answer file (0600) and the typed code, both verified by the machine', async () => {
    const request = await pending('fp-cli-machine-01');
    const requestFile = path.join(dir, 'request.json');
    fs.writeFileSync(requestFile, JSON.stringify(request.file));
    const answerFile = path.join(dir, 'answer.json');
    const run = await runCli(['leases', 'activate', requestFile, '--out', answerFile], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^lease [0-9a-f-]{36}: .+ on .+, 9 days, until \S+ \(offline-days\)$/m);
    const code = run.stdout.trim().split('\n').at(-1) ?? '';
    const jwks = (
      await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })
    ).json() as JSONWebKeySet;
    const fromCode = await verifyActivation(code, {
      request: request.request,
      jwks,
      fingerprint: 'fp-cli-machine-01',
    });
    const fromFile = await verifyActivation(fs.readFileSync(answerFile, 'utf8'), {
      request: request.request,
      jwks,
      fingerprint: 'fp-cli-machine-01',
    });
    expect(fromFile.leaseId).toBe(fromCode.leaseId);
    expect(fs.statSync(answerFile).mode & 0o777).toBe(0o600);

    const listed = await runCli(['leases', 'offline', '--json'], cliEnv);
    expect(JSON.parse(listed.stdout)).toEqual(
      expect.arrayContaining([expect.objectContaining({ leaseId: fromCode.leaseId, via: 'admin' })]),
    );
  });

  it('says what is wrong with a request and exits 1, writing nothing', async () => {
    const request = await pending('fp-cli-machine-02');
    const cut = request.code.split('-').slice(0, -2).join('-');
    const run = await runCli(['leases', 'activate', cut, '--out', path.join(dir, 'never.json')], cliEnv);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/request: /);
    expect(fs.existsSync(path.join(dir, 'never.json'))).toBe(false);
  });
});
