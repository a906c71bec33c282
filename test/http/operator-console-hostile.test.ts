import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { totpCode } from '../../src/domain/operators/totp.js';
import { FORM_LIMIT_BYTES } from '../../src/http/console/limits.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { Browser, NEW_PASSWORD, addOperator, signedIn, type Reply } from '../support/operator-console.js';

// Hostile input on the operator account forms: adding an operator, the forced password change,
// the second factor's code and a recovery code at sign-in, the enrolment's code, and a personal
// token on the Account page. Each form, for each field: control characters, a field past the
// form's limit and one past the field's own, the field missing, the field given twice, no CSRF
// token or a wrong one, and another operator's ids: refused, the message naming the field, and
// nothing audited or changed.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => h.close());

type Pairs = Array<[string, string]>;

/** A form as a browser of `browser`'s session posts it: the pairs in order, repeated or not. */
function postRaw(browser: Browser, url: string, pairs: Pairs): Promise<Reply> {
  return h.app.inject({
    method: 'POST',
    url,
    headers: { cookie: browser.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(pairs).toString(),
  });
}

/**
 * What these forms can change for `ids`: the operators (and any operator whose name or email holds
 * `tag`), their tokens, recovery codes, sessions (their progress, not their last use) and the
 * audit rows naming them.
 */
async function stateOf(ids: string[], tag = 'no-tag-given'): Promise<string> {
  const like = `%${tag}%`;
  const { rows } = await sql<{ digest: string }>`
    select md5(concat_ws('|',
      (select string_agg(t::text, ',' order by t::text) from operators t
        where id = any(${ids}::text[]) or email ilike ${like} or name ilike ${like}),
      (select string_agg(t::text, ',' order by t::text) from
        (select id, operator_id, name, role, expires_at, revoked_at from operator_tokens
          where operator_id = any(${ids}::text[])) t),
      (select string_agg(t::text, ',' order by t::text) from operator_recovery_codes t
        where operator_id = any(${ids}::text[])),
      (select string_agg(t::text, ',' order by t::text) from
        (select id_hash, pending_second_factor, second_factor_failures from console_sessions
          where operator_id = any(${ids}::text[])) t),
      (select count(*)::text || ':' || coalesce(max(id), 0)::text from audit_log
        where operator_id = any(${ids}::text[]) or detail->>'operatorId' = any(${ids}::text[]))
    )) as digest`.execute(h.database.db);
  return rows[0]?.digest ?? '';
}

const ESC = '\u001b';
const BIG = 'x'.repeat(100 * 1024);

/** A page answering a refusal of `field`: its message next to the field, or naming it. */
function namesField(reply: Reply, field: string): boolean {
  return (
    reply.body.includes(`id="field-${field}-error"`) ||
    reply.body.includes(`${field}: must not contain the character U+001B`)
  );
}

interface Form {
  /** A browser on the form's page, its CSRF token fresh. */
  open(): Promise<Browser>;
  url: string;
  /** A valid post, field by field. */
  valid: Record<string, string>;
  /** Whose state a refused post must leave alone. */
  ids(): string[];
  tag?: string;
}

/** A hostile post: what it sends, and the field its refusal must name. */
interface Variant {
  name: string;
  pairs: (csrf: string) => Pairs;
  field: string;
}

/** The hostile variants of a valid post, field by field. */
function hostileVariants(form: Form): Variant[] {
  const fields = Object.entries(form.valid);
  const variants: Variant[] = [];
  const replace = (field: string, value: string | undefined) => (csrf: string) =>
    [
      ['_csrf', csrf],
      ...fields.flatMap(([k, v]): Pairs =>
        k !== field ? [[k, v]] : value === undefined ? [] : [[k, value]],
      ),
    ] as Pairs;
  for (const [field, value] of fields) {
    variants.push({
      name: `control characters in ${field}`,
      pairs: replace(field, `${value}${ESC}[2J`),
      field,
    });
    // Under the form's limit, past any field's own (a name's 100, an email's 254, a code's 20).
    variants.push({
      name: `${field} past its own limit`,
      pairs: replace(field, `${value}${'x'.repeat(1000)}`),
      field,
    });
    variants.push({ name: `${field} missing`, pairs: replace(field, undefined), field });
    variants.push({
      name: `${field} given twice`,
      pairs: (csrf) => [...replace(field, value)(csrf), [field, `${value}-other`]],
      field,
    });
  }
  return variants;
}

/** Posts with a fresh page open; whether the post left the form's state as it was. */
async function attempt(form: Form, send: (browser: Browser) => Promise<Reply>) {
  const browser = await form.open();
  const before = await stateOf(form.ids(), form.tag);
  const reply = await send(browser);
  return { reply, unchanged: (await stateOf(form.ids(), form.tag)) === before };
}

/** Every hostile variant of the form: refused, naming the field, nothing changed. */
function describeHostile(title: string, form: () => Form): void {
  describe(title, () => {
    it('refuses every hostile variant of each field, naming it, changing nothing', async () => {
      const f = form();
      const wrong: string[] = [];
      for (const variant of hostileVariants(f)) {
        const { reply, unchanged } = await attempt(f, (b) => postRaw(b, f.url, variant.pairs(b.csrf)));
        const named = namesField(reply, variant.field);
        if (reply.statusCode !== 400 || !named || !unchanged) {
          wrong.push(
            `${variant.name}: ${reply.statusCode}${named ? '' : ', field not named'}${unchanged ? '' : ', changed'}`,
          );
        }
      }
      expect(wrong).toEqual([]);
    });

    it('refuses a field past the form limit with 413, changing nothing', async () => {
      const f = form();
      for (const field of Object.keys(f.valid)) {
        const { reply, unchanged } = await attempt(f, (b) =>
          postRaw(b, f.url, [['_csrf', b.csrf], ...Object.entries({ ...f.valid, [field]: BIG })]),
        );
        expect(reply.statusCode, field).toBe(413);
        expect(reply.body).toContain(`larger than ${FORM_LIMIT_BYTES / 1024} KiB`);
        expect(unchanged, field).toBe(true);
      }
    });

    it('refuses no CSRF token, a wrong one, and a wrong one beside the right one, changing nothing', async () => {
      const f = form();
      const cases: Record<string, (csrf: string) => Pairs> = {
        none: () => Object.entries(f.valid),
        wrong: () => [['_csrf', 'x'.repeat(43)], ...Object.entries(f.valid)],
        'right, then wrong': (csrf) => [
          ['_csrf', csrf],
          ['_csrf', 'x'.repeat(43)],
          ...Object.entries(f.valid),
        ],
        'wrong, then right': (csrf) => [
          ['_csrf', 'x'.repeat(43)],
          ['_csrf', csrf],
          ...Object.entries(f.valid),
        ],
      };
      const wrong: string[] = [];
      for (const [name, pairs] of Object.entries(cases)) {
        const { reply, unchanged } = await attempt(f, (b) => postRaw(b, f.url, pairs(b.csrf)));
        if (reply.statusCode !== 403 || !unchanged)
          wrong.push(`${name}: ${reply.statusCode}${unchanged ? '' : ', changed'}`);
      }
      expect(wrong).toEqual([]);
    });
  });
}

// An owner adding an operator on the Operators page.
let owner: Awaited<ReturnType<typeof signedIn>>;
const ADD_TAG = uniqueCode('hostile');
describeHostile('adding an operator', () => ({
  open: async () => {
    await owner.browser.get('/console/operator/operators');
    return owner.browser;
  },
  url: '/console/operator/operators',
  valid: { name: `Eve ${ADD_TAG}`, email: `${ADD_TAG}@example.com`, role: 'support' },
  ids: () => [owner.operator.id],
  tag: ADD_TAG,
}));

// A new operator's first sign-in, owing a new password before anything else.
let owing: { browser: Browser; id: string };
describeHostile('the forced password change', () => ({
  open: async () => {
    await owing.browser.get('/console/operator/account/password');
    return owing.browser;
  },
  url: '/console/operator/account/password',
  valid: { password: NEW_PASSWORD },
  ids: () => [owing.id],
}));

// An operator with a second factor, signed in with the password and owing the code.
let enrolled: { id: string; email: string; secret: string; codes: string[] };
/** A fresh sign-in owing its code: a wrong code spends one of a session's five tries. */
async function owingCode(): Promise<Browser> {
  const browser = new Browser(h);
  const signIn = await browser.post('/console/operator/sign-in', {
    email: enrolled.email,
    password: NEW_PASSWORD,
  });
  expect(signIn.headers.location).toBe('/console/operator/sign-in/code');
  await browser.get('/console/operator/sign-in/code');
  return browser;
}
describeHostile('the second factor at sign-in', () => ({
  open: owingCode,
  url: '/console/operator/sign-in/code',
  valid: { code: totpCode(enrolled.secret, Date.now() + 30_000) },
  ids: () => [enrolled.id],
}));
describeHostile('a recovery code at sign-in', () => ({
  open: owingCode,
  url: '/console/operator/sign-in/code',
  valid: { code: enrolled.codes[0] as string },
  ids: () => [enrolled.id],
}));

// An operator enrolling a second factor: the code that confirms it.
let enrolling: Awaited<ReturnType<typeof signedIn>>;
describeHostile('confirming an enrolment', () => ({
  open: async () => {
    await enrolling.browser.get('/console/operator/account/two-factor');
    return enrolling.browser;
  },
  url: '/console/operator/account/two-factor',
  valid: { code: '123456' },
  ids: () => [enrolling.operator.id],
}));

// A personal token on the Account page.
let holder: Awaited<ReturnType<typeof signedIn>>;
describeHostile('creating a personal token', () => ({
  open: async () => {
    await holder.browser.get('/console/operator/account');
    return holder.browser;
  },
  url: '/console/operator/account/tokens',
  valid: { name: 'ci', role: 'support', days: '30' },
  ids: () => [holder.operator.id],
}));

/** Enrols a second factor from the Account page: the secret and the ten recovery codes. */
async function enrol(browser: Browser): Promise<{ secret: string; codes: string[] }> {
  const page = await browser.get('/console/operator/account/two-factor');
  const secret = /data-secret[^>]*>([A-Z2-7]+)</.exec(page.body)?.[1] as string;
  const done = await browser.post('/console/operator/account/two-factor', {
    code: totpCode(secret, Date.now()),
  });
  expect(done.statusCode, done.body).toBe(200);
  const codes = [...done.body.matchAll(/<li><code>([0-9A-Z]{5}-[0-9A-Z]{5})<\/code><\/li>/g)].map(
    (m) => m[1] as string,
  );
  return { secret, codes };
}

beforeAll(async () => {
  owner = await signedIn(h, 'owner');
  const fresh = await addOperator(h, 'support');
  const browser = new Browser(h);
  await browser.post('/console/operator/sign-in', { email: fresh.email, password: fresh.password });
  owing = { browser, id: fresh.id };
  const twoFactor = await signedIn(h, 'admin');
  enrolled = {
    id: twoFactor.operator.id,
    email: twoFactor.operator.email,
    ...(await enrol(twoFactor.browser)),
  };
  enrolling = await signedIn(h, 'auditor');
  holder = await signedIn(h, 'admin');
});

describe("another operator's ids and codes", () => {
  it("answers another operator's token as one that does not exist, revoking nothing", async () => {
    await holder.browser.get('/console/operator/account');
    const mine = await holder.browser.post('/console/operator/account/tokens', {
      name: 'mine',
      role: 'support',
      days: '30',
    });
    expect(mine.statusCode).toBe(200);
    const [token] = await h.app.services.operators.tokens(holder.operator.id);
    const before = await stateOf([holder.operator.id, owner.operator.id]);
    await owner.browser.get('/console/operator/account');
    const theirs = await owner.browser.post(`/console/operator/account/tokens/${token?.id}/revoke`, {});
    expect(theirs.statusCode).toBe(404);
    expect(await stateOf([holder.operator.id, owner.operator.id])).toBe(before);
  });

  it("changes only the signed-in operator's password, whatever ids the form carries", async () => {
    const victim = await signedIn(h, 'support');
    const attacker = await addOperator(h, 'support');
    const browser = new Browser(h);
    await browser.post('/console/operator/sign-in', { email: attacker.email, password: attacker.password });
    await browser.get('/console/operator/account/password');
    const before = await stateOf([victim.operator.id]);
    const changed = await browser.post('/console/operator/account/password', {
      password: NEW_PASSWORD,
      id: victim.operator.id,
      operatorId: victim.operator.id,
      email: victim.operator.email,
    });
    expect(changed.statusCode).toBe(303);
    expect(await stateOf([victim.operator.id])).toBe(before);
  });

  it("refuses another operator's code and recovery code at sign-in, spending none of theirs", async () => {
    const other = await signedIn(h, 'support');
    const theirs = await enrol(other.browser);
    const browser = await owingCode();
    const before = await stateOf([other.operator.id]);
    for (const code of [theirs.codes[0] as string, totpCode(theirs.secret, Date.now() + 30_000)]) {
      const refused = await browser.post('/console/operator/sign-in/code', { code });
      expect(refused.statusCode).toBe(400);
      expect(namesField(refused, 'code')).toBe(true);
    }
    expect(await stateOf([other.operator.id])).toBe(before);
    // Their recovery code still opens their own sign-in.
    const own = new Browser(h);
    await own.post('/console/operator/sign-in', { email: other.operator.email, password: NEW_PASSWORD });
    await own.get('/console/operator/sign-in/code');
    expect(
      (await own.post('/console/operator/sign-in/code', { code: theirs.codes[0] as string })).statusCode,
    ).toBe(303);
  });

  it('keeps the Operators page and its add form from an operator who is not an owner', async () => {
    const before = await stateOf([holder.operator.id], ADD_TAG);
    await holder.browser.get('/console/operator/account');
    const refused = await holder.browser.post('/console/operator/operators', {
      name: `Mallory ${ADD_TAG}`,
      email: `m-${ADD_TAG}@example.com`,
      role: 'owner',
    });
    expect(refused.statusCode).toBe(404);
    expect(await stateOf([holder.operator.id], ADD_TAG)).toBe(before);
  });
});
