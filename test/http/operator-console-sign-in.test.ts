import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/domain/operators/totp.js';
import type { OperatorRole } from '../../src/domain/operators/roles.js';
import { startHarness, startIsolatedHarness, type Harness } from '../support/harness.js';
import {
  addOperator as addFor,
  Browser as BrowserOn,
  NEW_PASSWORD,
  signedIn as signedInOn,
  type Reply,
} from '../support/operator-console.js';

// Named operators in the console: email and password, the one-time password changed first, TOTP
// enrolment with its QR code and recovery codes, sign-in with the second factor (wrong, reused,
// out-of-window codes refused; recovery codes good once), the owner's two-factor rule, and the
// audit log naming the operator.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.app.services.twoFactor.setRequired(false);
  await h.close();
});

class Browser extends BrowserOn {
  constructor() {
    super(h);
  }
}
const addOperator = (role: OperatorRole) => addFor(h, role);

/**
 * Runs a test on a server and database of its own (the helpers above follow `h`): the owner's
 * rule holds for every operator, and set on the shared PostgreSQL database it would send the
 * operators of the files running beside this one to enrol.
 */
async function onItsOwnDatabase(run: () => Promise<void>): Promise<void> {
  const shared = h;
  h = await startIsolatedHarness();
  try {
    await run();
  } finally {
    await h.close();
    h = shared;
  }
}
const signedIn = (role: OperatorRole) => signedInOn(h, role);

async function auditOf(operatorId: string, action: string) {
  return h.database.db
    .selectFrom('audit_log')
    .select(['operator', 'operator_id', 'detail', 'subject'])
    .where('action', '=', action)
    .where((eb) =>
      eb.or([
        eb('operator_id', '=', operatorId),
        eb(eb.ref('detail', '->>').key('operatorId'), '=', operatorId),
      ]),
    )
    .execute();
}

/** Enrols TOTP from the account page; answers the secret and the recovery codes. */
async function enrol(browser: Browser): Promise<{ secret: string; codes: string[] }> {
  const page = await browser.get('/console/operator/account/two-factor');
  expect(page.statusCode, page.body).toBe(200);
  expect(page.body).toMatch(/<img class="qr" src="data:image\/svg\+xml;base64,/);
  const secret = /data-secret[^>]*>([A-Z2-7]+)</.exec(page.body)?.[1];
  expect(secret).toBeDefined();
  const wrong = await browser.post('/console/operator/account/two-factor', {
    code: '000000' === totpCode(secret as string, Date.now()) ? '111111' : '000000',
  });
  expect(wrong.statusCode).toBe(400);
  const right = await browser.post('/console/operator/account/two-factor', {
    code: totpCode(secret as string, Date.now()),
  });
  expect(right.statusCode, right.body).toBe(200);
  const codes = [...right.body.matchAll(/<li><code>([0-9A-Z]{5}-[0-9A-Z]{5})<\/code><\/li>/g)].map(
    (m) => m[1] as string,
  );
  expect(codes).toHaveLength(10);
  return { secret: secret as string, codes };
}

describe('operator console sign-in', () => {
  it('signs in by email and password, asks for a new password first, and audits both by name', async () => {
    const { browser, operator } = await signedIn('admin');
    const home = await browser.get('/console/operator');
    expect(home.statusCode).toBe(200);
    expect(home.body).toContain(operator.name);
    const signedInRows = await auditOf(operator.id, 'operator.signed_in');
    expect(signedInRows.length).toBeGreaterThanOrEqual(1);
    expect(signedInRows[0]?.operator).toBe(operator.name);
    expect(await auditOf(operator.id, 'operator.password_changed')).toHaveLength(1);

    // The one-time password is spent; the new one signs in, with no step owed.
    const again = new Browser();
    const old = await again.post('/console/operator/sign-in', {
      email: operator.email,
      password: operator.password,
    });
    expect(old.statusCode).toBe(200);
    expect(old.body).toContain('Wrong email or password.');
    expect(await auditOf(operator.id, 'operator.sign_in_failed')).toHaveLength(1);
    const ok = await again.post('/console/operator/sign-in', {
      email: operator.email.toUpperCase(),
      password: NEW_PASSWORD,
    });
    expect(ok.statusCode).toBe(303);
    expect((await again.get('/console/operator/apps')).statusCode).toBe(200);
  });

  it('refuses a short new password naming the field, and keeps the old one', async () => {
    const operator = await addOperator('support');
    const browser = new Browser();
    await browser.post('/console/operator/sign-in', { email: operator.email, password: operator.password });
    await browser.get('/console/operator/account/password');
    const short = await browser.post('/console/operator/account/password', { password: 'short' });
    expect(short.statusCode).toBe(400);
    expect(short.body).toContain('12 to 200 characters');
    expect(short.body).toMatch(/id="field-password"[^>]*aria-invalid="true"/);
    expect((await browser.get('/console/operator/apps')).headers.location).toBe(
      '/console/operator/account/password',
    );
  });

  it('locks a source out after repeated wrong passwords, as members are', async () => {
    const operator = await addOperator('auditor');
    const browser = new Browser();
    const answers: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const reply = await browser.post('/console/operator/sign-in', {
        email: operator.email,
        password: `wrong-${i}`,
      });
      answers.push(
        reply.body.includes('locked')
          ? 'locked'
          : reply.body.includes('Wrong email')
            ? 'refused'
            : String(reply.statusCode),
      );
    }
    expect(answers.slice(0, 2)).toEqual(['refused', 'refused']);
    expect(answers.at(-1)).toBe('locked');
    // Even the right password is refused from this source while it is locked.
    const right = await browser.post('/console/operator/sign-in', {
      email: operator.email,
      password: operator.password,
    });
    expect(right.statusCode).toBe(200);
    expect(right.headers['set-cookie']).toBeUndefined();
  });

  it('enrols TOTP with a QR code and ten recovery codes, then asks for a code at sign-in', async () => {
    const { browser, operator } = await signedIn('owner');
    const { secret, codes } = await enrol(browser);
    expect(await auditOf(operator.id, 'operator.two_factor_enabled')).toHaveLength(1);
    const stored = await h.database.db
      .selectFrom('operator_recovery_codes')
      .select('code_hash')
      .where('operator_id', '=', operator.id)
      .execute();
    expect(stored).toHaveLength(10);
    expect(stored.map((r) => r.code_hash)).not.toContain(codes[0]);

    const next = new Browser();
    const signIn = await next.post('/console/operator/sign-in', {
      email: operator.email,
      password: NEW_PASSWORD,
    });
    expect(signIn.headers.location).toBe('/console/operator/sign-in/code');
    // Nothing but the code page until the code is given.
    expect((await next.get('/console/operator/operators')).headers.location).toBe(
      '/console/operator/sign-in/code',
    );
    await next.get('/console/operator/sign-in/code');
    // The code the enrolment was confirmed with is spent: its step or an earlier one is refused.
    const reused = await next.post('/console/operator/sign-in/code', {
      code: totpCode(secret, Date.now() - 30_000),
    });
    expect(reused.statusCode).toBe(400);
    // A code from five minutes ago is outside the window.
    const old = await next.post('/console/operator/sign-in/code', {
      code: totpCode(secret, Date.now() - 300_000),
    });
    expect(old.statusCode).toBe(400);
    expect(old.body).toContain('tries left');
    const fresh = totpCode(secret, Date.now() + 30_000);
    const ok = await next.post('/console/operator/sign-in/code', { code: fresh });
    expect(ok.statusCode, ok.body).toBe(303);
    expect((await next.get('/console/operator/operators')).statusCode).toBe(200);
    // The account page names both factors, not the password alone.
    expect((await next.get('/console/operator/account')).body).toMatch(
      /<dt>Signed in with<\/dt>\s*<dd>password and an authenticator code<\/dd>/,
    );

    // The same code again, in another sign-in: reused, refused.
    const third = new Browser();
    await third.post('/console/operator/sign-in', { email: operator.email, password: NEW_PASSWORD });
    await third.get('/console/operator/sign-in/code');
    const replay = await third.post('/console/operator/sign-in/code', { code: fresh });
    expect(replay.statusCode).toBe(400);
    expect(replay.body).toContain('used already');

    // A recovery code works once, typed in any case and spacing.
    const code = codes[0] as string;
    const typed = code.toLowerCase().replace('-', ' ');
    expect((await third.post('/console/operator/sign-in/code', { code: typed })).statusCode).toBe(303);
    expect((await third.get('/console/operator/account')).body).toContain('password and a recovery code');
    expect(await auditOf(operator.id, 'operator.recovery_code_used')).toHaveLength(1);
    const fourth = new Browser();
    await fourth.post('/console/operator/sign-in', { email: operator.email, password: NEW_PASSWORD });
    await fourth.get('/console/operator/sign-in/code');
    expect((await fourth.post('/console/operator/sign-in/code', { code })).statusCode).toBe(400);
  });

  it('ends a sign-in waiting for its code when the second factor is reset meanwhile', async () => {
    const { browser, operator } = await signedIn('admin');
    await enrol(browser);
    const waiting = new Browser();
    await waiting.post('/console/operator/sign-in', { email: operator.email, password: NEW_PASSWORD });
    expect((await waiting.get('/console/operator/apps')).headers.location).toBe(
      '/console/operator/sign-in/code',
    );
    await h.app.services.twoFactor.reset(operator.id);
    expect((await waiting.get('/console/operator/apps')).headers.location).toBe(
      '/console/operator/sign-in?note=expired',
    );
  });

  it('ends a session that gives five wrong codes', async () => {
    const { browser, operator } = await signedIn('admin');
    await enrol(browser);
    const next = new Browser();
    await next.post('/console/operator/sign-in', { email: operator.email, password: NEW_PASSWORD });
    await next.get('/console/operator/sign-in/code');
    let last: Reply | undefined;
    for (let i = 0; i < 5; i += 1)
      last = await next.post('/console/operator/sign-in/code', { code: '12345' + String(i) });
    expect(last?.statusCode).toBe(303);
    expect(last?.headers.location).toBe('/console/operator/sign-in?note=code-ended');
    expect((await next.get('/console/operator/apps')).headers.location).toBe(
      '/console/operator/sign-in?note=expired',
    );
  });

  it("enforces the owner's rule: an operator without a second factor enrols before anything else", async () => {
    await onItsOwnDatabase(async () => {
      const { browser: owner } = await signedIn('owner');
      await owner.get('/console/operator/operators');
      // An owner without a second factor of his own is asked to enrol first.
      const early = await owner.post('/console/operator/operators/two-factor-rule', { required: 'on' });
      expect(early.statusCode).toBe(400);
      expect(early.body).toContain('Turn on your own two-factor sign-in first');
      expect(await h.app.services.twoFactor.required()).toBe(false);
      await enrol(owner);
      await owner.get('/console/operator/operators');
      const rule = await owner.post('/console/operator/operators/two-factor-rule', { required: 'on' });
      expect(rule.statusCode).toBe(200);
      try {
        const { browser, operator } = await signedIn('support');
        const page = await browser.get('/console/operator/leases');
        expect(page.headers.location).toBe('/console/operator/account/two-factor');
        // Turning it off is refused while the rule holds.
        await enrol(browser);
        expect((await browser.get('/console/operator/leases')).statusCode).toBe(200);
        const account = await browser.get('/console/operator/account');
        expect(account.body).not.toContain('/console/operator/account/two-factor/disable');
        expect(await auditOf(operator.id, 'operator.two_factor_enabled')).toHaveLength(1);
      } finally {
        await owner.get('/console/operator/operators');
        await owner.post('/console/operator/operators/two-factor-rule', { required: 'off' });
      }
    });
  });

  it('lets an owner reset a lost second factor and disable an operator, whose session ends at once', async () => {
    const { browser: owner } = await signedIn('owner');
    const { browser, operator } = await signedIn('admin');
    await enrol(browser);
    await owner.get('/console/operator/operators');
    const reset = await owner.post(`/console/operator/operators/${operator.id}/reset-two-factor`, {});
    expect(reset.statusCode).toBe(200);
    expect((await h.app.services.twoFactor.status(operator.id)).enabled).toBe(false);
    const disabled = await owner.post(`/console/operator/operators/${operator.id}/disable`, {});
    expect(disabled.statusCode).toBe(200);
    expect((await browser.get('/console/operator/apps')).headers.location).toBe(
      '/console/operator/sign-in?note=expired',
    );
  });

  it("creates and revokes personal tokens from the account page, shown once, and not another operator's", async () => {
    const { browser, operator } = await signedIn('admin');
    await browser.get('/console/operator/account');
    const wider = await browser.post('/console/operator/account/tokens', {
      name: 'ci',
      role: 'owner',
      days: '30',
    });
    expect(wider.statusCode).toBe(400);
    const created = await browser.post('/console/operator/account/tokens', {
      name: 'ci',
      role: 'support',
      days: '30',
    });
    expect(created.statusCode).toBe(200);
    const token = /<pre class="secret">(kwp_[A-Za-z0-9_-]+)<\/pre>/.exec(created.body)?.[1];
    expect(token).toBeDefined();
    const status = await h.app.inject({
      method: 'GET',
      url: '/admin/status',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(status.statusCode).toBe(200);
    expect((await browser.get('/console/operator/account')).body).not.toContain(token);
    const [view] = await h.app.services.operators.tokens(operator.id);
    const other = await signedIn('admin');
    await other.browser.get('/console/operator/account');
    const theirs = await other.browser.post(`/console/operator/account/tokens/${view?.id}/revoke`, {});
    expect(theirs.statusCode).toBe(404);
    const mine = await browser.post(`/console/operator/account/tokens/${view?.id}/revoke`, {});
    expect(mine.statusCode).toBe(303);
    const after = await h.app.inject({
      method: 'GET',
      url: '/admin/status',
      headers: { authorization: `Bearer ${token}` },
    });
    expect(after.statusCode).toBe(401);
  });
});
