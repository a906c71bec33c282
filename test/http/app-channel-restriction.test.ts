import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import { appToken, createTestApp, passwordLogin, userToken, type TestApp } from '../support/fixtures.js';
import { assetWorld, memberCaller, okData, type AssetWorld } from '../support/order-fixtures.js';
import { history } from './audit-helpers.js';
import { expectFailure } from './member-helpers.js';

// Member-center apps serve every enterprise (DOMAIN.md §2) unless restricted to their channels:
// then a login of another channel's enterprise answers exactly as a wrong password does, and user
// tokens issued before the restriction stop working for such enterprises at once.

let h: Harness;
/** An enterprise bound in the world app's channel, with an administrator who has a password. */
let world: AssetWorld;

const admin = (url: string, payload?: object) =>
  h.app.inject({
    method: 'POST',
    url: `/admin${url}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    ...(payload === undefined ? {} : { payload }),
  });

const restrict = (app: TestApp, restrictToChannels: boolean) =>
  admin(`/apps/${app.appKey}/settings`, { restrictToChannels });

/** A member-center read of the world's enterprise through `app`, for the user token `userTok`. */
async function assetNums(app: TestApp, userTok: string) {
  const call = memberCaller(h, { token: await appToken(h, app) }, userTok);
  return call('GET', `/enterprise/${world.enterpriseGlobalId}/asset/assetNums`);
}

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
});
afterAll(async () => h.close());

describe('member logins of an app restricted to its channels', () => {
  it("by default serve every enterprise: another channel's app logs the member in", async () => {
    const crm = await createTestApp(h, { scopes: ['auth_me'] });
    const token = await userToken(h, crm, world.admin.account, world.admin.password);
    okData(await assetNums(crm, token));
  });

  it("answer another channel's enterprise as a wrong password, and its old tokens stop working", async () => {
    const crm = await createTestApp(h, { scopes: ['auth_me'] });
    const before = await userToken(h, crm, world.admin.account, world.admin.password);
    const set = await restrict(crm, true);
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toMatchObject({ appKey: crm.appKey, restrictToChannels: true });

    const refused = await passwordLogin(h, crm, world.admin.account, world.admin.password);
    const wrongPassword = await passwordLogin(h, crm, world.admin.account, 'Wrong-pass1');
    const noSuchEnterprise = await passwordLogin(h, crm, 'admin@zz0000', world.admin.password);
    for (const answer of [refused, wrongPassword, noSuchEnterprise]) {
      expect(answer.statusCode, answer.body).toBe(400);
      expect(answer.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'wrong account or password',
      });
    }
    expectFailure(await assetNums(crm, before), '60005');

    // Lifting the restriction serves the enterprise again, the old token too.
    expect((await restrict(crm, false)).statusCode).toBe(200);
    okData(await assetNums(crm, before));
    await userToken(h, crm, world.admin.account, world.admin.password);
  });

  it('still serve the enterprises of its own channels', async () => {
    const own = await createTestApp(h, { scopes: ['auth_me'], channels: [world.channel, 'OTHER-CH'] });
    expect((await restrict(own, true)).statusCode).toBe(200);
    const token = await userToken(h, own, world.admin.account, world.admin.password);
    okData(await assetNums(own, token));
    // Any case of the account, as logins always allow.
    await userToken(h, own, world.admin.account.toUpperCase(), world.admin.password);
  });

  it('are refused by the token service too, for a member of an enterprise the app does not serve', async () => {
    const crm = await createTestApp(h, { scopes: ['auth_me'] });
    expect((await restrict(crm, true)).statusCode).toBe(200);
    const [stored] = await h.app.services.apps
      .list()
      .then((apps) => apps.filter((a) => a.appKey === crm.appKey));
    expect(stored?.restrictToChannels).toBe(true);
    const record = await h.app.services.apps.authenticate(crm.appKey, crm.appSecret);
    const member = await h.database.db
      .selectFrom('members')
      .select('id')
      .where('account', '=', world.admin.account)
      .executeTakeFirstOrThrow();
    expect(record).toBeDefined();
    const issued = await h.app.services.tokens.issue({
      app: record as NonNullable<typeof record>,
      scopes: ['auth_me'],
      memberId: member.id,
    });
    expect(issued).toBeUndefined();
    // An app token is no member's and is issued as before.
    await appToken(h, crm);
  });
});

describe('the restrictToChannels setting', () => {
  it('is off by default, audited when it changes and not when set to what it is', async () => {
    const crm = await createTestApp(h, { scopes: ['auth_me'] });
    const apps = (
      await h.app.inject({
        method: 'GET',
        url: '/admin/apps',
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json() as Array<{ appKey: string; restrictToChannels: boolean }>;
    expect(apps.find((a) => a.appKey === crm.appKey)).toMatchObject({ restrictToChannels: false });
    expect((await restrict(crm, true)).statusCode).toBe(200);
    expect((await restrict(crm, true)).statusCode).toBe(200);
    expect((await restrict(crm, false)).statusCode).toBe(200);
    const rows = (await history(h, crm.appKey)).filter((e) => e.action === 'app.channel_restriction_set');
    expect(rows.map((e) => [e.operator, e.detail])).toEqual([
      ['admin-api', expect.objectContaining({ restrictToChannels: true, previous: false })],
      ['admin-api', expect.objectContaining({ restrictToChannels: false, previous: true })],
    ]);
  });

  it('is refused for an app without channels, which it would shut to every member', async () => {
    const bare = await createTestApp(h, { scopes: ['auth_me'], channels: [] });
    const refused = await restrict(bare, true);
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({
      error: 'restrictToChannels: the application has no channels, so it would refuse every member login',
    });
    await userToken(h, bare, world.admin.account, world.admin.password);
    expect((await history(h, bare.appKey)).map((e) => e.action)).toEqual(['app.created']);
  });
});
