import { expect } from 'vitest';
import { ADMIN_KEY, type Harness } from './harness.js';

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

/** A browser as inject sees one: the session cookie it was given and the CSRF token of its pages. */
export interface ConsoleClient {
  /** A page; `headers` as a browser adds them (Accept-Language). */
  get(url: string, headers?: Record<string, string>): Promise<Reply>;
  /** A form post; `_csrf` is added unless `csrf: false`. */
  post(
    url: string,
    form: Record<string, string>,
    options?: { csrf?: boolean; headers?: Record<string, string> },
  ): Promise<Reply>;
  csrf: string;
  /** The session cookie, as a `cookie` header's value. */
  cookie: string;
}

function cookieOf(reply: Reply): string {
  const set = reply.headers['set-cookie'];
  const all = Array.isArray(set) ? set : [set ?? ''];
  const session = all.find((c) => c.startsWith('keyward_session='));
  expect(session, 'a session cookie').toBeDefined();
  return (session as string).split(';')[0] as string;
}

async function clientFor(h: Harness, cookie: string, home: string): Promise<ConsoleClient> {
  const get = (url: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url, headers: { ...headers, cookie } });
  const page = await get(home);
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  expect(csrf, 'a CSRF token on the page').toBeDefined();
  const client: ConsoleClient = {
    csrf: csrf as string,
    cookie,
    get,
    post: (url, form, options = {}) =>
      h.app.inject({
        method: 'POST',
        url,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', ...options.headers },
        payload: new URLSearchParams(
          options.csrf === false ? form : { _csrf: client.csrf, ...form },
        ).toString(),
      }),
  };
  return client;
}

export async function enterpriseClient(
  h: Harness,
  account: string,
  password: string,
): Promise<ConsoleClient> {
  const signIn = await h.app.inject({
    method: 'POST',
    url: '/console/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ userName: account, password }).toString(),
  });
  expect(signIn.statusCode, signIn.body).toBe(303);
  return clientFor(h, cookieOf(signIn), '/console/enterprise');
}

export async function operatorClient(h: Harness): Promise<ConsoleClient> {
  const signIn = await h.app.inject({
    method: 'POST',
    url: '/console/operator/sign-in',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ adminKey: ADMIN_KEY }).toString(),
  });
  expect(signIn.statusCode, signIn.body).toBe(303);
  return clientFor(h, cookieOf(signIn), '/console/operator');
}
