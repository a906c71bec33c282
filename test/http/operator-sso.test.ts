import { randomBytes } from 'node:crypto';
import * as oidc from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentWindow } from '../../src/domain/gate/gate.js';
import { sha256 } from '../../src/domain/shared/secrets.js';
import { SSO_START_LIMITS, SsoService } from '../../src/domain/sso/sso.service.js';
import type { SsoConfig } from '../../src/sso-config.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { startTestProvider, type ProviderUser, type TestProvider } from '../support/oidc-provider.js';
import { SsoBrowser, type Page } from '../support/sso-browser.js';

// Operators' single sign-on against a real OpenID Connect provider (oidc-provider): each mapped
// group lands on the console with its role; a user in no mapped group is refused; a return that
// is not this browser's, is replayed, or carries the wrong nonce or PKCE verifier is refused; the
// sign-ins anyone may start are bounded; a provider that is down gives a page that says so, never
// a 500.

const KEYWARD = 'http://keyward.test';
const REDIRECT = `${KEYWARD}/console/operator/sso/callback`;
const tag = uniqueCode('sso');
const ROLE_MAP = `${tag}-owners=owner,${tag}-admins=admin,${tag}-support=support,${tag}-auditors=auditor`;

const user = (id: string, groups: string[], extra: Partial<ProviderUser> = {}): ProviderUser => ({
  id: `${tag}-${id}`,
  name: `SSO ${id} ${tag}`,
  email: `${id}.${tag}@example.com`,
  emailVerified: true,
  groups,
  ...extra,
});

const USERS = {
  owner: user('owner', [`${tag}-owners`, `${tag}-support`, 'everyone']),
  admin: user('admin', [`${tag}-admins`]),
  support: user('support', [`${tag}-support`, 'everyone']),
  auditor: user('auditor', [`${tag}-auditors`]),
  mover: user('mover', [`${tag}-admins`]),
  nobody: user('nobody', ['everyone', 'staff']),
  unverified: user('unverified', [`${tag}-admins`], { emailVerified: false }),
  linked: user('linked', [`${tag}-support`]),
  disabled: user('disabled', [`${tag}-support`]),
  tampered: user('tampered', [`${tag}-support`]),
};

let provider: TestProvider;
let h: Harness;

beforeAll(async () => {
  provider = await startTestProvider(Object.values(USERS), REDIRECT);
  h = await startHarness({
    OIDC_ISSUER: provider.issuer,
    OIDC_CLIENT_ID: provider.clientId,
    OIDC_CLIENT_SECRET: provider.clientSecret,
    OIDC_REDIRECT_URL: REDIRECT,
    OIDC_ROLE_MAP: ROLE_MAP,
    OIDC_SCOPES: 'openid email profile groups',
  });
});
afterAll(async () => {
  await h?.close();
  await provider?.close();
});

const browser = () => new SsoBrowser(h, KEYWARD);
const host = new URL(KEYWARD).host;

async function operatorByEmail(email: string) {
  return h.database.db
    .selectFrom('operators')
    .select(['id', 'name', 'role', 'status', 'sso_subject'])
    .where('email', '=', email)
    .executeTakeFirst();
}

/** Sign-ins in flight: only this file starts any, one test at a time. */
async function liveRequests(): Promise<number> {
  const row = await h.database.db
    .selectFrom('sso_requests')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('expires_at', '>', new Date())
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function auditOf(subject: string) {
  return h.database.db
    .selectFrom('audit_log')
    .select(['action', 'operator', 'detail'])
    .where('subject', '=', subject)
    .orderBy('id')
    .execute();
}

/** A clear page: the sentence, no stack, no secret. */
function expectClearPage(page: Page, status: number, sentence: RegExp) {
  expect(page.status, page.body.slice(0, 500)).toBe(status);
  expect(page.headers['content-type']).toMatch(/text\/html/);
  expect(page.body).toMatch(sentence);
  expect(page.body).not.toMatch(/\n\s+at |Error:|TypeError/);
  expect(page.body).not.toContain(provider.clientSecret);
  expect(page.headers['set-cookie'] ?? '').not.toMatch(/keyward_session=[A-Za-z0-9_-]/);
}

/** Signs in through the provider and follows Keyward's page on to the console. */
async function signIn(login: ProviderUser) {
  const b = browser();
  const callback = await b.throughProvider(login.id);
  const landed = await b.request(callback);
  return { b, landed };
}

describe('single sign-on with OpenID Connect', () => {
  it('offers single sign-on on the operator sign-in page', async () => {
    const page = await h.app.inject({ method: 'GET', url: '/console/operator/sign-in' });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('href="/console/operator/sso"');
  });

  it('maps each group to its role and lands on the console signed in as that operator', async () => {
    for (const [role, who] of [
      ['owner', USERS.owner],
      ['admin', USERS.admin],
      ['support', USERS.support],
      ['auditor', USERS.auditor],
    ] as const) {
      const { b, landed } = await signIn(who);
      expect(landed.status, landed.body.slice(0, 500)).toBe(200);
      expect(landed.headers.refresh).toBe('0; url=/console/operator');
      expect(b.cookie(host, 'keyward_session')).toBeDefined();
      expect(b.cookie(host, 'keyward_sso'), 'the binding cookie is spent').toBeUndefined();
      const home = await b.request(`${KEYWARD}/console/operator`);
      expect(home.status, `${role}: ${home.body.slice(0, 300)}`).toBe(200);
      expect(home.body).toContain(who.name);
      const operator = await operatorByEmail(who.email as string);
      expect(operator).toMatchObject({ role, status: 'active', sso_subject: `${provider.issuer} ${who.id}` });
      const audit = await auditOf(who.email as string);
      expect(audit.map((row) => row.action)).toEqual(['operator.sso_provisioned', 'operator.signed_in']);
      expect(audit[1]?.detail).toMatchObject({ method: 'sso', operatorId: operator?.id });
      // What the role allows, checked from the session it was given.
      const auditPage = await b.request(`${KEYWARD}/console/operator/audit`);
      expect(auditPage.status, `${role} on the audit log`).toBe(role === 'support' ? 404 : 200);
      const operatorsPage = await b.request(`${KEYWARD}/console/operator/operators`);
      expect(operatorsPage.status, `${role} on operators`).toBe(role === 'owner' ? 200 : 404);
      const write = await b.request(`${KEYWARD}/console/operator/apps`, { name: `app ${tag}` });
      if (role === 'support' || role === 'auditor') expect(write.status, `${role} writing`).toBe(404);
    }
  });

  it('finds the same operator again and sets the role from the groups at each sign-in', async () => {
    const first = await signIn(USERS.mover);
    expect(first.landed.status).toBe(200);
    const before = await operatorByEmail(USERS.mover.email as string);
    expect(before?.role).toBe('admin');
    USERS.mover.groups = [`${tag}-auditors`, 'everyone'];
    const again = await signIn(USERS.mover);
    expect(again.landed.status).toBe(200);
    const after = await operatorByEmail(USERS.mover.email as string);
    expect(after).toMatchObject({ id: before?.id, role: 'auditor' });
    const audit = await auditOf(USERS.mover.email as string);
    expect(audit.map((row) => row.action)).toEqual([
      'operator.sso_provisioned',
      'operator.signed_in',
      'operator.role_set',
      'operator.signed_in',
    ]);
    expect(audit[2]?.detail).toMatchObject({ role: 'auditor', previousRole: 'admin', via: 'sso' });
  });

  it('never demotes the last active owner: that sign-in is refused with a 409 page', async (context) => {
    const owner = await operatorByEmail(USERS.owner.email as string);
    const others = await h.database.db
      .selectFrom('operators')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('role', '=', 'owner')
      .where('status', '=', 'active')
      .where('id', '<>', owner?.id ?? '')
      .executeTakeFirstOrThrow();
    // On a database other test files share, another owner may exist: then there is no last one.
    if (Number(others.n) > 0) context.skip();
    const groups = USERS.owner.groups;
    USERS.owner.groups = [`${tag}-admins`];
    try {
      const { landed } = await signIn(USERS.owner);
      expectClearPage(landed, 409, /last active owner/);
      expect(await operatorByEmail(USERS.owner.email as string)).toMatchObject({ role: 'owner' });
    } finally {
      USERS.owner.groups = groups;
    }
  });

  it('refuses a user in no mapped group with a clear 403 page, creates nothing and audits it', async () => {
    const { b, landed } = await signIn(USERS.nobody);
    expectClearPage(landed, 403, /in no group that gives a role/);
    expect(b.cookie(host, 'keyward_session')).toBeUndefined();
    expect(await operatorByEmail(USERS.nobody.email as string)).toBeUndefined();
    const audit = await auditOf(USERS.nobody.email as string);
    expect(audit.map((row) => row.action)).toEqual(['operator.sign_in_failed']);
    expect(audit[0]?.detail).toMatchObject({ stage: 'sso', reason: 'no_role' });
  });

  it('ties an existing operator by a verified email, never by an unverified one', async () => {
    const linked = await h.app.services.operators.add({
      name: 'Linked by email',
      email: USERS.linked.email as string,
      role: 'admin',
    });
    const ok = await signIn(USERS.linked);
    expect(ok.landed.status).toBe(200);
    expect(await operatorByEmail(USERS.linked.email as string)).toMatchObject({
      id: linked.operator.id,
      role: 'support',
      sso_subject: `${provider.issuer} ${USERS.linked.id}`,
    });
    expect((await auditOf(USERS.linked.email as string)).map((row) => row.action)).toContain(
      'operator.sso_linked',
    );

    await h.app.services.operators.add({
      name: 'Unverified match',
      email: USERS.unverified.email as string,
      role: 'support',
    });
    const refused = await signIn(USERS.unverified);
    expectClearPage(refused.landed, 403, /has not verified/);
    expect(await operatorByEmail(USERS.unverified.email as string)).toMatchObject({
      role: 'support',
      sso_subject: null,
    });
  });

  it('refuses a disabled operator', async () => {
    expect((await signIn(USERS.disabled)).landed.status).toBe(200);
    await h.app.services.operators.setStatus(USERS.disabled.email as string, 'disabled');
    const { b, landed } = await signIn(USERS.disabled);
    expectClearPage(landed, 403, /disabled/);
    expect(b.cookie(host, 'keyward_session')).toBeUndefined();
  });

  it("refuses a return with another browser's state, and a replayed one", async () => {
    const alice = browser();
    const aliceReturn = await alice.throughProvider(USERS.support.id);
    const mallory = browser();
    await mallory.throughProvider(USERS.support.id);
    // Mallory's own binding cookie does not take Alice's state, nor does none at all.
    expectClearPage(await mallory.request(aliceReturn), 400, /does not match one started in this browser/);
    expectClearPage(await browser().request(aliceReturn), 400, /does not match/);
    // Alice's sign-in was not spent by the attempts: she finishes it.
    const aliceCookie = alice.cookie(host, 'keyward_sso') as string;
    expect((await alice.request(aliceReturn)).status).toBe(200);
    // The same return again, even with the cookie it was bound to, finds nothing.
    const replay = browser();
    replay.setCookie(host, 'keyward_sso', aliceCookie);
    expectClearPage(await replay.request(aliceReturn), 400, /does not match/);
  });

  it('refuses an ID token with another nonce and a code exchanged with another PKCE verifier', async () => {
    const sso = async (change: { nonce?: string; code_verifier?: string }) => {
      const b = browser();
      const back = await b.throughProvider(USERS.tampered.id);
      const state = new URL(back).searchParams.get('state') as string;
      const changed = await h.database.db
        .updateTable('sso_requests')
        .set(change)
        .where('state_hash', '=', sha256(state))
        .executeTakeFirst();
      expect(changed.numUpdatedRows).toBe(1n);
      return b.request(back);
    };
    expectClearPage(await sso({ nonce: oidc.randomNonce() }), 400, /does not belong to this sign-in/);
    expectClearPage(
      await sso({ code_verifier: oidc.randomPKCECodeVerifier() }),
      400,
      /does not belong to this sign-in/,
    );
    expect(await operatorByEmail(USERS.tampered.email as string)).toBeUndefined();
  });

  it('bounds the sign-ins one address (an IPv6 /64) starts: 429 past the limit, and no row', async () => {
    const limit = SSO_START_LIMITS.perAddressPerMinute;
    // The count is per minute: a burst that straddles two minutes is tried again, from a new /64.
    for (let attempt = 0; ; attempt += 1) {
      const network = `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
      const minute = currentWindow();
      const before = await liveRequests();
      const answers = [];
      // A new address of the /64 each time: walking through one's own addresses is no way round.
      for (let i = 1; i <= limit + 5; i += 1) {
        answers.push(
          await h.app.inject({
            method: 'GET',
            url: '/console/operator/sso',
            remoteAddress: `${network}::${i.toString(16)}`,
          }),
        );
      }
      if (currentWindow() !== minute && attempt === 0) continue;
      expect(answers.slice(0, limit).map((a) => a.statusCode)).toEqual(Array<number>(limit).fill(303));
      for (const refused of answers.slice(limit)) {
        expect(refused.statusCode).toBe(429);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
        expect(refused.body).toMatch(/Too many sign-ins from here/);
        expect(refused.headers['set-cookie'] ?? '').not.toMatch(/keyward_sso/);
      }
      expect(await liveRequests()).toBe(before + limit);
      break;
    }
    // Another address signs in as ever.
    const { landed } = await signIn(USERS.support);
    expect(landed.status, landed.body.slice(0, 500)).toBe(200);
  });

  it('bounds the sign-ins in flight from every address together, and counts only live ones', async () => {
    const live = await liveRequests();
    const sso = new SsoService(
      h.database.db,
      h.app.config.sso as SsoConfig,
      h.app.services.operatorSignIn,
      h.app.services.gate,
      { perAddressPerMinute: 100, inFlight: live + 2 },
    );
    const first = await sso.start('198.51.100.1');
    expect(first.status).toBe('ok');
    expect((await sso.start('198.51.100.2')).status).toBe('ok');
    expect(await sso.start('198.51.100.3')).toEqual({
      status: 'limited',
      by: 'everyone',
      retryAfterSeconds: 60,
    });
    expect(await liveRequests()).toBe(live + 2);
    // An expired sign-in holds no room: it is removed, and another starts.
    const state = first.status === 'ok' ? new URL(first.url).searchParams.get('state') : null;
    await h.database.db
      .updateTable('sso_requests')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('state_hash', '=', sha256(state ?? ''))
      .execute();
    expect((await sso.start('198.51.100.3')).status).toBe('ok');
    expect(await liveRequests()).toBe(live + 2);
  });

  it('answers a clear 503 page when the provider goes down mid-sign-in', async () => {
    const b = browser();
    const back = await b.throughProvider(USERS.support.id);
    await provider.close();
    expectClearPage(await b.request(back), 503, /cannot be reached/);
  });
});

describe('single sign-on with a provider that cannot be reached', () => {
  let down: Harness;
  beforeAll(async () => {
    down = await startHarness({
      // A port nothing listens on: the discovery fails at once.
      OIDC_ISSUER: 'http://127.0.0.1:9',
      OIDC_CLIENT_ID: 'keyward',
      OIDC_CLIENT_SECRET: 'a-secret-that-must-not-show',
      OIDC_REDIRECT_URL: REDIRECT,
      OIDC_ROLE_MAP: ROLE_MAP,
    });
  });
  afterAll(async () => down?.close());

  it('answers 503 with a sentence at the start, stores nothing, and tries again next time', async () => {
    for (let i = 0; i < 2; i += 1) {
      const reply = await down.app.inject({ method: 'GET', url: '/console/operator/sso' });
      expect(reply.statusCode).toBe(503);
      expect(reply.body).toMatch(/cannot be reached/);
      expect(reply.body).not.toMatch(/a-secret-that-must-not-show|\n\s+at /);
      expect(reply.headers['set-cookie'] ?? '').not.toMatch(/keyward_sso/);
    }
  });
});
