import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createActivationRequest,
  KeywardLeaseError,
  returnCodeFor,
  verifyActivation,
  type ActivationAnswerFile,
  type JSONWebKeySet,
  type PendingActivation,
} from '../../packages/client/src/index.js';
import { appToken, userToken } from '../support/fixtures.js';
import { ADMIN_KEY, nonce, startHarness, type Harness } from '../support/harness.js';
import { assetWorld } from '../support/order-fixtures.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// Offline activation (docs/activation.md) through the admin API and the runtime's route: a
// machine's request, by typed code or file, becomes a lease under every rule of a check-out.

interface Answer {
  leaseId: string;
  assetNum: string;
  expiresAt: number;
  expBound: string;
  lease: string;
  code: string;
  file: ActivationAnswerFile;
}

let h: Harness;
let world: RuntimeWorld;
/** The published keys, read after the first signature (a test server makes its key then). */
const keys = async (): Promise<JSONWebKeySet> =>
  (await h.app.inject({ method: 'GET', url: '/.well-known/jwks.json' })).json();

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  await h.app.services.apps.setOfflineLeaseMaxDays(world.app.appKey, 30);
});
afterAll(async () => h.close());

const machine = () => `fp-offline-${randomBytes(6).toString('hex')}`;

async function lock(overrides: Record<string, unknown> = {}) {
  return lockWith(world, { limitConcurrent: 1, ...overrides });
}

async function ask(
  l: { assetNum: string; crmProductId: string },
  fingerprint: string,
  days = 7,
  appKey = world.app.appKey,
): Promise<PendingActivation> {
  return createActivationRequest({
    appKey,
    assetNum: l.assetNum,
    crmProductId: l.crmProductId,
    days,
    fingerprint,
  });
}

function admin(url: string, payload: object) {
  return h.app.inject({
    method: 'POST',
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload,
  });
}

async function activated(request: string): Promise<Answer> {
  const response = await admin('/runtime/activations', { request });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as Answer;
}

async function refusal(request: string): Promise<string> {
  const response = await admin('/runtime/activations', { request });
  expect(response.statusCode, response.body).toBe(400);
  return (response.json() as { error: string }).error;
}

describe('offline activation by the operator (admin API)', () => {
  it('answers a typed request with a signed lease and its typed form, each verified by the machine', async () => {
    const l = await lock();
    const fp = machine();
    const pending = await ask(l, fp);
    const answer = await activated(pending.code);
    const jwks = await keys();
    expect(answer).toMatchObject({ assetNum: l.assetNum, expBound: 'offline-days' });
    for (const form of [answer.code, answer.lease, JSON.stringify(answer.file)]) {
      const verified = await verifyActivation(form, { request: pending.request, jwks, fingerprint: fp });
      expect(verified).toMatchObject({
        leaseId: answer.leaseId,
        assetNum: l.assetNum,
        expBound: 'offline-days',
      });
      expect(verified.expiresAt * 1000).toBe(Math.floor(answer.expiresAt / 1000) * 1000);
    }
    // Another machine, or an answer to another request, is refused.
    await expect(
      verifyActivation(answer.code, { request: pending.request, jwks, fingerprint: machine() }),
    ).rejects.toMatchObject({ reason: 'fingerprint' });
    const other = await ask(l, fp);
    await expect(
      verifyActivation(answer.code, { request: other.request, jwks, fingerprint: fp }),
    ).rejects.toBeInstanceOf(KeywardLeaseError);
    await expect(
      verifyActivation(answer.lease, { request: other.request, jwks, fingerprint: fp }),
    ).rejects.toMatchObject({
      reason: 'request',
    });
  });

  it('takes the request file as well, as an editor saves it, and lists the machine among the offline ones', async () => {
    const l = await lock();
    const pending = await ask(l, machine(), 3);
    // Pretty-printed with CRLF line ends: line breaks are a file's, any other control character is refused.
    const file = `${JSON.stringify(pending.file, null, 2).replace(/\n/g, '\r\n')}\r\n`;
    expect(await refusal(file.replace('{', '{\u001b'))).toMatch(
      /^request: must not contain the character U\+001B/,
    );
    const answer = await activated(file);
    const listed = await h.app.inject({
      method: 'GET',
      url: '/admin/runtime/offline-machines',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(listed.json()).toEqual(
      expect.arrayContaining([expect.objectContaining({ leaseId: answer.leaseId, via: 'admin' })]),
    );
  });

  it('holds to the seats, the app’s offline maximum and the license’s end', async () => {
    const l = await lock();
    await activated((await ask(l, machine())).code);
    expect(await refusal((await ask(l, machine())).code)).toMatch(/all 1 seats/);
    expect(await refusal((await ask(await lock(), machine(), 31)).code)).toMatch(
      /31 days are not allowed.*at most 30/,
    );
    const ending = await lock({ limitEndDate: Date.now() + 2 * 86_400_000 });
    const capped = await activated((await ask(ending, machine(), 20)).code);
    expect(capped.expBound).toBe('license-end');
    expect(capped.expiresAt).toBeLessThanOrEqual(Date.now() + 2 * 86_400_000);
  });

  it('answers a request once: a replay is refused and changes nothing', async () => {
    const l = await lock({ limitConcurrent: 3 });
    const pending = await ask(l, machine());
    const first = await activated(pending.code);
    const before = await h.database.db
      .selectFrom('runtime_leases')
      .select('id')
      .where('asset_id', 'is not', null)
      .execute();
    expect(await refusal(pending.code)).toMatch(new RegExp(`already answered \\(lease ${first.leaseId}`));
    const after = await h.database.db
      .selectFrom('runtime_leases')
      .select('id')
      .where('asset_id', 'is not', null)
      .execute();
    expect(after.length).toBe(before.length);
  });

  it('names what is wrong with a mistyped, cut, foreign or oversized request, and changes nothing', async () => {
    const l = await lock();
    const { code } = await ask(l, machine());
    const groups = code.split('-');
    const third = groups[2] as string;
    groups[2] = (third[0] === 'A' ? 'B' : 'A') + third.slice(1);
    expect(await refusal(groups.join('-'))).toMatch(/^request: group 3 does not check/);
    expect(await refusal(code.slice(0, 30))).toMatch(/^request: /);
    expect(await refusal('{"keyward":"something-else"}')).toMatch(/not a Keyward activation request/);
    const big = await admin('/runtime/activations', { request: 'A'.repeat(5000) });
    expect(big.statusCode).toBe(400);
    expect((await ask({ ...l, crmProductId: 'no-such-product' }, machine())).code).toBeTruthy();
    expect(await refusal((await ask({ ...l, crmProductId: 'no-such-product' }, machine())).code)).toMatch(
      /no asset of this holder carries the product/,
    );
    expect(await refusal((await ask(l, machine(), 7, 'kw_no_such_app')).code)).toMatch(
      /its application cannot activate/,
    );
    const count = await h.database.db.selectFrom('runtime_activations').select('id').execute();
    expect(await refusal(code.replace(/^./, code[0] === '0' ? '1' : '0'))).toMatch(/group 1/);
    expect((await h.database.db.selectFrom('runtime_activations').select('id').execute()).length).toBe(
      count.length,
    );
  });

  it('is audited and raises lease.activated for the app', async () => {
    const l = await lock();
    const answer = await activated((await ask(l, machine())).code);
    const audit = await h.database.db
      .selectFrom('audit_log')
      .select(['action', 'subject'])
      .where('action', '=', 'lease.activated')
      .where('subject', '=', l.assetNum)
      .execute();
    expect(audit).toHaveLength(1);
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select(['type', 'data'])
      .where('type', '=', 'lease.activated')
      .execute();
    expect(events.map((e) => (e.data as { leaseId?: string }).leaseId)).toContain(answer.leaseId);
  });
});

describe('early return', () => {
  it('is refused where the app does not allow it, and frees the seat where it does', async () => {
    const l = await lock();
    const fp = machine();
    const pending = await ask(l, fp);
    const answer = await activated(pending.code);
    const code = returnCodeFor(pending.request, answer.leaseId);
    const refused = await admin('/runtime/activations/return', { code });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ error: expect.stringMatching(/does not allow early return/) });
    expect(await refusal((await ask(l, machine())).code)).toMatch(/all 1 seats/);

    await h.app.services.apps.setSettings(world.app.appKey, { offlineEarlyReturn: true });
    try {
      const returned = await admin('/runtime/activations/return', { code });
      expect(returned.statusCode, returned.body).toBe(200);
      expect(returned.json()).toEqual({ leaseId: answer.leaseId, assetNum: l.assetNum });
      // The seat is free for the next machine.
      await activated((await ask(l, machine())).code);
      // A code for another machine, or a made-up lease, is answered as no such lease.
      const stranger = returnCodeFor((await ask(l, machine())).request, answer.leaseId);
      expect((await admin('/runtime/activations/return', { code: stranger })).json()).toEqual({
        error: 'no such lease',
      });
    } finally {
      await h.app.services.apps.setSettings(world.app.appKey, { offlineEarlyReturn: false });
    }
  });
});

describe('offline activation by a connected machine (runtime route)', () => {
  const call = (path: string, body: object, headers: Record<string, string>) =>
    h.app.inject({ method: 'POST', url: `/runtime/v1${path}?g_nonce=${nonce()}`, headers, payload: body });

  it('activates for a member of the lock’s enterprise, through the request’s own app', async () => {
    const l = await lock();
    const fp = machine();
    const pending = await ask(l, fp);
    const member = await userToken(h, world.app, world.admin.account, world.admin.password);
    const response = await call(
      '/activations',
      { request: pending.code },
      {
        authorization: `Bearer ${world.runtimeToken}`,
        usertoken: member,
      },
    );
    expect(response.json(), response.body).toMatchObject({ code: 0, data: { assetNum: l.assetNum } });
    const { code } = (response.json() as { data: Answer }).data;
    expect(
      await verifyActivation(code, { request: pending.request, jwks: await keys(), fingerprint: fp }),
    ).toMatchObject({
      assetNum: l.assetNum,
    });
  });

  it('refuses without a member (60005), for another enterprise’s member (90001) or another app’s request', async () => {
    const l = await lock();
    const { code } = await ask(l, machine());
    const auth = { authorization: `Bearer ${world.runtimeToken}` };
    expect((await call('/activations', { request: code }, auth)).json()).toMatchObject({ code: '60005' });
    const other = await assetWorld(h, ['auth_order', 'auth_me', 'auth_runtime']);
    const stranger = await userToken(h, world.app, other.admin.account, other.admin.password);
    expect(
      (await call('/activations', { request: code }, { ...auth, usertoken: stranger })).json(),
    ).toMatchObject({
      code: '90001',
    });
    const otherToken = await appToken(h, other.app);
    const theirs = await userToken(h, other.app, other.admin.account, other.admin.password);
    expect(
      (
        await call(
          '/activations',
          { request: code },
          { authorization: `Bearer ${otherToken}`, usertoken: theirs },
        )
      ).json(),
    ).toMatchObject({ code: '90000', message: 'request: is for another application' });
  });
});
