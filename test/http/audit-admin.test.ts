import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256 } from '../../src/domain/shared/secrets.js';
import { seedEnterprise } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { actionsOf, audit, expectNoSecrets, history } from './audit-helpers.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

const admin = (method: 'GET' | 'POST', url: string, payload?: object, clientRequestId?: string) =>
  h.app.inject({
    method,
    url: `/admin${url}`,
    headers: {
      authorization: `Bearer ${ADMIN_KEY}`,
      ...(clientRequestId === undefined ? {} : { 'x-request-id': clientRequestId }),
    },
    ...(payload ? { payload } : {}),
  });

async function createApp(pending: boolean): Promise<{ appKey: string; appSecret: string }> {
  const response = await admin('POST', '/apps', { name: 'audited', scopes: ['auth_order'], pending });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as { appKey: string; appSecret: string };
}

describe('audit of the admin API', () => {
  it("records an app's life with the operator as actor, the key as subject and no secret", async () => {
    const app = await createApp(true);
    const approved = await admin('POST', `/apps/${app.appKey}/approve`, undefined, 'console-7');
    expect(approved.statusCode).toBe(200);
    // Approving again changes nothing: no row.
    expect((await admin('POST', `/apps/${app.appKey}/approve`)).statusCode).toBe(200);
    const kept = (await admin('POST', `/apps/${app.appKey}/rotate-secret`)).json() as { appSecret: string };
    const revoked = (
      await admin('POST', `/apps/${app.appKey}/rotate-secret`, { revokeTokens: true })
    ).json() as { appSecret: string };
    expect((await admin('POST', `/apps/${app.appKey}/disable`)).statusCode).toBe(200);
    expect((await admin('POST', `/apps/${app.appKey}/disable`)).statusCode).toBe(200);

    const entries = await history(h, app.appKey);
    expect(entries.map((e) => e.action)).toEqual([
      'app.created',
      'app.approved',
      'app.secret_rotated',
      'app.secret_rotated',
      'app.disabled',
    ]);
    const appId = (entries[0]?.detail as { appId: string }).appId;
    for (const e of entries) {
      expect(e).toMatchObject({
        appId: null,
        operator: 'admin-api',
        subject: app.appKey,
        enterpriseId: null,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
        detail: expect.objectContaining({ appId }),
      });
    }
    expect(entries[0]?.detail).toEqual({
      appId,
      name: 'audited',
      scopes: ['auth_order'],
      channels: [],
      status: 'pending',
    });
    expect(entries[1]?.clientRequestId).toBe('console-7');
    expect(entries.slice(2, 4).map((e) => e.detail.tokensRevoked)).toEqual([false, true]);
    expect(entries[4]?.detail).toMatchObject({ previousStatus: 'active', tokensRevoked: true });
    const secrets = [app.appSecret, kept.appSecret, revoked.appSecret];
    expectNoSecrets(entries, [...secrets, ...secrets.map(sha256)]);
  });

  it('writes nothing for a refused change', async () => {
    const app = await createApp(false);
    expect((await admin('POST', `/apps/${app.appKey}/disable`)).statusCode).toBe(200);
    // A disabled app cannot be approved; an unknown one cannot be changed.
    expect((await admin('POST', `/apps/${app.appKey}/approve`)).statusCode).toBe(400);
    expect((await admin('POST', '/apps/kw_nobody/rotate-secret')).statusCode).toBe(404);
    expect((await admin('POST', '/apps', { name: 'x', scopes: ['auth_nothing'] })).statusCode).toBe(400);
    expect(await actionsOf(h, app.appKey)).toEqual(['app.created', 'app.disabled']);
    expect(await audit(h, { subject: 'kw_nobody' })).toEqual([]);
  });

  it("records member limits with the enterprise's global id, old and new values", async () => {
    const enterprise = await seedEnterprise(h);
    const path = `/enterprises/${enterprise.globalId}/member-limit`;
    expect((await admin('POST', path, { memberLimit: 5 })).statusCode).toBe(200);
    expect((await admin('POST', path, { memberLimit: null })).statusCode).toBe(200);
    expect((await admin('POST', path, { memberLimit: 0 })).statusCode).toBe(400);
    expect((await admin('POST', '/enterprises/nobody/member-limit', { memberLimit: 5 })).statusCode).toBe(
      404,
    );
    const entries = await history(h, enterprise.globalId);
    expect(entries.map((e) => [e.action, e.enterpriseId, e.detail])).toEqual([
      ['enterprise.member_limit_set', enterprise.globalId, { memberLimit: 5, previousLimit: null }],
      ['enterprise.member_limit_set', enterprise.globalId, { memberLimit: null, previousLimit: 5 }],
    ]);
    expect(await audit(h, { subject: 'nobody' })).toEqual([]);
  });

  it('records a password set by the operator, never the password or its hash', async () => {
    const enterprise = await seedEnterprise(h);
    const password = 'Operator-set-9';
    const set = await admin('POST', '/members/password', { account: enterprise.adminAccount, password });
    expect(set.statusCode, set.body).toBe(200);
    // Refused: too short, and an unknown account.
    expect(
      (await admin('POST', '/members/password', { account: enterprise.adminAccount, password: 'x' }))
        .statusCode,
    ).toBe(400);
    expect(
      (await admin('POST', '/members/password', { account: 'nobody@zzzzzz', password })).statusCode,
    ).toBe(404);
    const entries = await history(h, enterprise.adminAccount);
    expect(entries).toEqual([
      expect.objectContaining({
        action: 'member.password_set',
        appId: null,
        operator: 'admin-api',
        enterpriseId: enterprise.globalId,
        detail: { memberGlobalId: enterprise.adminGlobalId, tokensRevoked: true },
      }),
    ]);
    const hash = await h.database.db
      .selectFrom('members')
      .select('password_hash')
      .where('global_id', '=', enterprise.adminGlobalId)
      .executeTakeFirstOrThrow();
    expectNoSecrets(entries, [password, hash.password_hash as string]);
    expect(await audit(h, { subject: 'nobody@zzzzzz' })).toEqual([]);
  });
});
