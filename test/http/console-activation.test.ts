import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActivationRequest,
  returnCodeFor,
  verifyActivation,
  type JSONWebKeySet,
} from '../../packages/client/src/index.js';
import { enterpriseClient, operatorClient, type ConsoleClient } from '../support/console-client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// "Offline machines" in the console: an administrator activates his enterprise's machines, the
// operator anyone's, through the same service as the CLI and the runtime (docs/activation.md).

let h: Harness;
let world: RuntimeWorld;
let other: RuntimeWorld;
let admin: ConsoleClient;
let operator: ConsoleClient;

beforeAll(async () => {
  h = await startHarness();
  [world, other] = [await runtimeWorld(h), await runtimeWorld(h)];
  for (const w of [world, other]) await h.app.services.apps.setOfflineLeaseMaxDays(w.app.appKey, 30);
  admin = await enterpriseClient(h, world.admin.account, world.admin.password);
  operator = await operatorClient(h);
});
afterAll(async () => h.close());

const machine = () => `fp-console-${randomBytes(5).toString('hex')}`;
const keys = async (): Promise<JSONWebKeySet> =>
  (await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();

async function requestFor(w: RuntimeWorld, fingerprint: string, days = 5) {
  const l = await lockWith(w, { limitConcurrent: 1 });
  return createActivationRequest({
    appKey: w.app.appKey,
    assetNum: l.assetNum,
    crmProductId: l.crmProductId,
    days,
    fingerprint,
  });
}

const answerCodeOf = (body: string) =>
  /<textarea id="answer-code"[^>]*>([^<]+)<\/textarea>/.exec(body)?.[1]?.trim();

describe('the console’s offline machines', () => {
  it('lets the administrator activate his machine and read back the answer, its QR code and file', async () => {
    const fp = machine();
    const pending = await requestFor(world, fp);
    const page = await admin.post('/console/enterprise/offline-machines/activate', { request: pending.code });
    expect(page.statusCode, page.body.slice(0, 300)).toBe(200);
    const code = answerCodeOf(page.body);
    expect(code).toBeDefined();
    expect(page.body).toMatch(/, for 5 days, until \d{4}-\d\d-\d\d \d\d:\d\d UTC\./);
    const lease = await verifyActivation(code ?? '', {
      request: pending.request,
      jwks: await keys(),
      fingerprint: fp,
    });
    expect(lease.assetNum).toBe(pending.request.assetNum);
    expect(page.body).toContain('src="data:image/svg+xml;base64,');
    const file = /href="data:application\/json;base64,([^"]+)"/.exec(page.body)?.[1] ?? '';
    const answerFile = Buffer.from(file, 'base64').toString('utf8');
    expect(
      await verifyActivation(answerFile, { request: pending.request, jwks: await keys(), fingerprint: fp }),
    ).toMatchObject({
      leaseId: lease.leaseId,
    });
    const list = await admin.get('/console/enterprise/offline-machines');
    expect(list.body).toContain(`data-lease="${lease.leaseId}"`);
  });

  it('answers another enterprise’s lock as one that does not exist, and changes nothing', async () => {
    const pending = await requestFor(other, machine());
    const page = await admin.post('/console/enterprise/offline-machines/activate', { request: pending.code });
    expect(page.statusCode).toBe(400);
    expect(page.body).toContain('no asset of this holder carries the product');
    const rows = await h.database.db
      .selectFrom('runtime_activations')
      .select('id')
      .where('asset_num', '=', pending.request.assetNum)
      .execute();
    expect(rows).toEqual([]);
  });

  it('names the mistyped group of a request, and takes a request file uploaded as text', async () => {
    const pending = await requestFor(world, machine());
    const groups = pending.code.split('-');
    groups[3] = `${(groups[3] as string)[0] === 'A' ? 'B' : 'A'}${(groups[3] as string).slice(1)}`;
    const typo = await admin.post('/console/enterprise/offline-machines/activate', {
      request: groups.join('-'),
    });
    expect(typo.statusCode).toBe(400);
    expect(typo.body).toContain('group 4 does not check');
    expect(typo.body).toContain(groups.join('-'));
    const fromFile = await admin.post('/console/enterprise/offline-machines/activate', {
      request: JSON.stringify(pending.file),
    });
    expect(fromFile.statusCode).toBe(200);
    const replay = await admin.post('/console/enterprise/offline-machines/activate', {
      request: pending.code,
    });
    expect(replay.statusCode).toBe(400);
    expect(replay.body).toContain('already answered');
  });

  it('lets the operator activate any enterprise’s machine, list it, and take back its seat where the app allows', async () => {
    const fp = machine();
    const pending = await requestFor(other, fp);
    const page = await operator.post('/console/operator/offline-machines/activate', {
      request: pending.code,
    });
    expect(page.statusCode).toBe(200);
    const lease = await verifyActivation(answerCodeOf(page.body) ?? '', {
      request: pending.request,
      jwks: await keys(),
      fingerprint: fp,
    });
    const list = await operator.get('/console/operator/offline-machines');
    expect(list.body).toContain(`data-lease="${lease.leaseId}"`);
    const code = returnCodeFor(pending.request, lease.leaseId);
    const refused = await operator.post('/console/operator/offline-machines/return', { code });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('does not allow early return');
    await h.app.services.apps.setSettings(other.app.appKey, { offlineEarlyReturn: true });
    const returned = await operator.post('/console/operator/offline-machines/return', { code });
    expect(returned.statusCode).toBe(200);
    expect(returned.body).toContain(`The seat of lease ${lease.leaseId}`);
    // The administrator of another enterprise cannot return it: no such lease for him.
    const stranger = await admin.post('/console/enterprise/offline-machines/return', { code });
    expect(stranger.body).toContain('no such lease');
  });
});
