import { randomInt } from 'node:crypto';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, seedEnterprise, type TestApp } from '../support/fixtures.js';
import { awayFromMinuteEnd, startHarness, type Harness } from '../support/harness.js';

// What one address with no credentials can do to everyone else before authentication: nothing.
// The server listens for real and is reached from two source addresses, so the address the limits
// see is the socket's. Every address in 127.0.0.0/8 reaches a loopback listener; these two are
// drawn afresh rather than 127.0.0.1 and .2 because on PostgreSQL every test file counts in one
// database and calls from 127.0.0.1: a flood from there would refuse their console sign-ins.
const net = `127.${randomInt(1, 255)}.${randomInt(256)}`;
const FLOOD = `${net}.1`;
const ELSEWHERE = `${net}.2`;

/** Requests of a flood sent at once: enough to overlap, few enough not to fill the pool. */
const AT_ONCE = 10;

let h: Harness;
let base: string;

beforeAll(async () => {
  // The shipped limits, but for the per-address one the suite lifts (test-env.ts).
  h = await startHarness();
  base = await h.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => h.close());

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A form post to the listener from the source address `from`. */
function post(from: string, path: string, form: Record<string, string>, authorization?: string) {
  const body = new URLSearchParams(form).toString();
  return new Promise<Answer>((resolve, reject) => {
    const sent = httpRequest(
      new URL(path, base),
      {
        method: 'POST',
        localAddress: from,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'content-length': Buffer.byteLength(body),
          ...(authorization === undefined ? {} : { authorization }),
        },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }),
        );
        response.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });
}

/** `count` requests, AT_ONCE at a time; their statuses in order. */
async function flood(count: number, send: (i: number) => Promise<Answer>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let start = 0; start < count; start += AT_ONCE) {
    const batch = Array.from({ length: Math.min(AT_ONCE, count - start) }, (_, k) => send(start + k));
    answers.push(...(await Promise.all(batch)));
  }
  return answers;
}

const signIn = (from: string, userName: string, password: string) =>
  post(from, '/console/sign-in', { userName, password });

const basic = (app: TestApp, secret = app.appSecret) =>
  `Basic ${Buffer.from(`${app.appKey}:${secret}`).toString('base64')}`;

const clientCredentials = (from: string, app: TestApp, secret?: string) =>
  post(from, '/oauth2/token', { grant_type: 'client_credentials' }, basic(app, secret));

const passwordGrant = (from: string, app: TestApp, username: string, password: string) =>
  post(from, '/oauth2/token', { grant_type: 'password', username, password }, basic(app));

/**
 * The flooding address is limited: past the first minute's budget (or two, should the flood run
 * over a minute's end), its requests are answered 429 unread. At most two budgets and the
 * requests in flight as each ran out went through.
 */
function expectFloodLimited(answers: Answer[]): void {
  const limited = answers.filter((a) => a.status === 429);
  const budget = h.config.tokenRate.failuresPerClientAddress;
  expect(limited.length).toBeGreaterThanOrEqual(answers.length - 2 * (budget + AT_ONCE));
  const retryAfter = Number(limited[0]?.headers['retry-after']);
  expect(retryAfter >= 1 && retryAfter <= 60).toBe(true);
}

/** Lets time pass for the account: the waits its sources and the account were given are over. */
async function waitOut(account: string): Promise<void> {
  const past = new Date(Date.now() - 1000);
  for (const table of ['login_source_attempts', 'login_attempts'] as const) {
    await h.database.db
      .updateTable(table)
      .set({ locked_until: past })
      .where('account', '=', account)
      .execute();
  }
}

describe('a flood from one address before authentication', () => {
  it('does not keep an enterprise administrator out of the console from another address', async () => {
    const enterprise = await seedEnterprise(h);
    await awayFromMinuteEnd();
    // Wrong passwords on the administrator's own account, and on accounts that do not exist.
    const answers = await flood(500, (i) =>
      signIn(FLOOD, i % 5 === 0 ? enterprise.adminAccount : `nobody${i}@${enterprise.code}`, `wrong-${i}`),
    );
    expect(answers.filter((a) => a.status !== 200 && a.status !== 429)).toEqual([]);
    expectFloodLimited(answers);
    // The flooder gets nowhere with the right password either: limited, or its source locked.
    expect((await signIn(FLOOD, enterprise.adminAccount, enterprise.adminPassword)).status).not.toBe(303);

    const right = await signIn(ELSEWHERE, enterprise.adminAccount, enterprise.adminPassword);
    expect(right.status, right.body).toBe(303);
    expect(right.headers.location).toBe('/console/enterprise');
    expect(String(right.headers['set-cookie'])).toMatch(/keyward_session=/);
  });

  it('does not keep an application from getting tokens at another address', async () => {
    const app = await createTestApp(h, { scopes: ['auth_order', 'auth_me'] });
    const enterprise = await seedEnterprise(h);
    await awayFromMinuteEnd();
    // Its app key is public: wrong secrets, and wrong passwords of its members with a right one.
    const answers = await flood(500, (i) => {
      if (i % 2 === 0) return clientCredentials(FLOOD, app, `wrong-${i}`);
      const account = i % 10 === 1 ? enterprise.adminAccount : `nobody${i}@${enterprise.code}`;
      return passwordGrant(FLOOD, app, account, `wrong-${i}`);
    });
    expect(answers.filter((a) => ![400, 401, 429].includes(a.status))).toEqual([]);
    expectFloodLimited(answers);
    expect(JSON.parse(answers.find((a) => a.status === 429)?.body ?? '{}')).toMatchObject({
      error: 'temporarily_unavailable',
      error_description: expect.stringMatching(/for this client from this address/),
    });

    const token = await clientCredentials(ELSEWHERE, app);
    expect(token.status, token.body).toBe(200);
    const login = await passwordGrant(ELSEWHERE, app, enterprise.adminAccount, enterprise.adminPassword);
    expect(login.status, login.body).toBe(200);
    expect(JSON.parse(login.body)).toMatchObject({ access_token: expect.any(String) });
  });

  it('does not make an account wait at another address, whatever its failures through many apps', async () => {
    // Five apps of one channel partner, five wrong passwords each from one address: each source
    // is locked, and the account's failures from anywhere pass the 20 that start its backoff.
    const apps = await Promise.all(
      Array.from({ length: 5 }, () => createTestApp(h, { scopes: ['auth_me'] })),
    );
    const enterprise = await seedEnterprise(h);
    const account = enterprise.adminAccount.toLowerCase();
    for (const app of apps) {
      for (let i = 0; i < 5; i += 1) {
        await waitOut(account);
        const wrong = await passwordGrant(FLOOD, app, enterprise.adminAccount, `wrong-${i}`);
        expect(JSON.parse(wrong.body)).toMatchObject({ error_description: 'wrong account or password' });
      }
    }
    const counted = await h.database.db
      .selectFrom('login_attempts')
      .select('failures')
      .where('account', '=', account)
      .executeTakeFirstOrThrow();
    expect(counted.failures).toBe(25);
    // As if the guesses went on: the account's backoff runs for the rest of the test.
    await h.database.db
      .updateTable('login_attempts')
      .set({ locked_until: new Date(Date.now() + 3600_000) })
      .where('account', '=', account)
      .execute();

    const right = await signIn(ELSEWHERE, enterprise.adminAccount, enterprise.adminPassword);
    expect(right.status, right.body).toBe(303);
    const login = await passwordGrant(
      ELSEWHERE,
      apps[0] as TestApp,
      enterprise.adminAccount,
      enterprise.adminPassword,
    );
    expect(login.status, login.body).toBe(200);

    // The flooder, through an app it has not failed with yet, has its one guess checked and then
    // waits with the account like every source that failed on it: the right password included.
    const fresh = await createTestApp(h, { scopes: ['auth_me'] });
    const guess = await passwordGrant(FLOOD, fresh, enterprise.adminAccount, 'one-more-guess');
    expect(JSON.parse(guess.body)).toMatchObject({ error_description: 'wrong account or password' });
    const after = await passwordGrant(FLOOD, fresh, enterprise.adminAccount, enterprise.adminPassword);
    expect(JSON.parse(after.body)).toMatchObject({
      error: 'invalid_grant',
      error_description: 'too many failed attempts; try again later',
    });
  });
});
