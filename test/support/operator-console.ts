import { expect } from 'vitest';
import type { OperatorRole } from '../../src/domain/operators/roles.js';
import { ADMIN_KEY, uniqueCode, type Harness } from './harness.js';

// A browser on the operator console as inject sees one, and named operators signed in through it:
// what the console's sign-in, role and audit tests share.

export type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** A browser: its cookie, and the CSRF token of the last page that had one. */
export class Browser {
  cookie = '';
  csrf = '';
  constructor(
    private readonly h: Harness,
    private readonly address = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`,
  ) {}

  private remember(reply: Reply): Reply {
    const set = reply.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set === undefined ? [] : [set]) {
      if (c.startsWith('keyward_session=')) this.cookie = c.split(';')[0] ?? '';
    }
    const token = /name="_csrf" value="([^"]+)"/.exec(reply.body)?.[1];
    if (token !== undefined) this.csrf = token;
    return reply;
  }

  async get(url: string): Promise<Reply> {
    return this.remember(
      await this.h.app.inject({
        method: 'GET',
        url,
        headers: { cookie: this.cookie },
        remoteAddress: this.address,
      }),
    );
  }

  async post(url: string, fields: Record<string, string>): Promise<Reply> {
    return this.remember(
      await this.h.app.inject({
        method: 'POST',
        url,
        headers: { cookie: this.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: form({ _csrf: this.csrf, ...fields }),
        remoteAddress: this.address,
      }),
    );
  }
}

export async function addOperator(
  h: Harness,
  role: OperatorRole,
): Promise<{ id: string; email: string; name: string; password: string }> {
  const name = `${role} ${uniqueCode('n')}`;
  const added = await h.app.inject({
    method: 'POST',
    url: '/admin/operators',
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { name, email: `${uniqueCode(role)}@example.com`, role },
  });
  expect(added.statusCode, added.body).toBe(200);
  const body = added.json<{ operator: { id: string; email: string }; password: string }>();
  return { id: body.operator.id, email: body.operator.email, name, password: body.password };
}

export const NEW_PASSWORD = 'correct horse battery staple';

/** Signs in with the one-time password and sets NEW_PASSWORD: a whole session. */
export async function signedIn(
  h: Harness,
  role: OperatorRole,
): Promise<{ browser: Browser; operator: Awaited<ReturnType<typeof addOperator>> }> {
  const operator = await addOperator(h, role);
  const browser = new Browser(h);
  const signIn = await browser.post('/console/operator/sign-in', {
    email: operator.email,
    password: operator.password,
  });
  expect(signIn.statusCode, signIn.body).toBe(303);
  const owed = await browser.get('/console/operator/apps');
  expect(owed.headers.location).toBe('/console/operator/account/password');
  await browser.get('/console/operator/account/password');
  const changed = await browser.post('/console/operator/account/password', { password: NEW_PASSWORD });
  expect(changed.statusCode, changed.body).toBe(303);
  return { browser, operator };
}
