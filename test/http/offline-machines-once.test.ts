import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivationRequest } from '../../packages/client/src/index.js';
import { enterpriseClient, operatorClient } from '../support/console-client.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { runCli } from '../support/server-process.js';
import { fingerprint, lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// A machine that asks for its activation again (a second request for the same lock, product and
// machine) gets the lease it already holds: two activations of one lease. "Machines holding a seat
// offline" is a list of leases, so it shows that lease once, in the CLI and on both consoles.

let h: Harness;
let world: RuntimeWorld;
let cliEnv: Record<string, string>;
let leaseId: string;

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 30);
  cliEnv = { KEYWARD_URL: await h.app.listen({ port: 0, host: '127.0.0.1' }), KEYWARD_ADMIN_KEY: ADMIN_KEY };
  const lock = await lockWith(world, { limitConcurrent: 2 });
  const machine = fingerprint();
  const ask = () =>
    createActivationRequest({
      appKey: world.app.appKey,
      assetNum: lock.assetNum,
      crmProductId: lock.crmProductId,
      days: 7,
      fingerprint: machine,
    });
  const leases: string[] = [];
  for (const pending of [await ask(), await ask()]) {
    const run = await runCli(['leases', 'activate', pending.code, '--json'], cliEnv);
    expect(run.code, run.stderr).toBe(0);
    leases.push((JSON.parse(run.stdout) as { leaseId: string }).leaseId);
  }
  expect(leases[1]).toBe(leases[0]);
  leaseId = leases[0] ?? '';
});
afterAll(async () => h.close());

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('a lease activated twice', () => {
  it('is one line of keyward leases offline, in JSON and as a table', async () => {
    const json = await runCli(['leases', 'offline', '--json'], cliEnv);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { leaseId: string }[];
    expect(rows.filter((r) => r.leaseId === leaseId)).toHaveLength(1);
    const table = await runCli(['leases', 'offline'], cliEnv);
    expect(count(table.stdout, leaseId)).toBe(1);
  });

  it('is one row on the operator’s and the administrator’s offline machines', async () => {
    const operator = await operatorClient(h);
    const admin = await enterpriseClient(h, world.admin.account, world.admin.password);
    for (const page of [
      await operator.get('/console/operator/offline-machines'),
      await admin.get('/console/enterprise/offline-machines'),
    ]) {
      expect(page.statusCode).toBe(200);
      expect(count(page.body, `data-lease="${leaseId}"`)).toBe(1);
    }
  });
});
