import type { Harness } from './harness.js';
import { uniqueCode } from './harness.js';
import { enterpriseTenant, hashPassword } from '../../src/domain/shared/passwords.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { newEnterpriseCode } from '../../src/domain/enterprises/enterprise-code.js';

export interface TestApp {
  appKey: string;
  appSecret: string;
  channels: string[];
}

export async function createTestApp(
  h: Harness,
  options: { scopes?: string[]; channels?: string[]; pending?: boolean } = {},
): Promise<TestApp> {
  const channels = options.channels ?? [uniqueCode('CH')];
  const created = await h.app.services.apps.create({
    name: 'test app',
    scopes: options.scopes ?? ['auth_order', 'auth_me'],
    channels,
    pending: options.pending ?? false,
  });
  return { appKey: created.appKey, appSecret: created.appSecret, channels };
}

/** An app token with all the app's scopes, or only `scope` (space-separated) when given. */
export async function appToken(h: Harness, app: TestApp, scope?: string): Promise<string> {
  const response = await h.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    headers: { authorization: `Basic ${Buffer.from(`${app.appKey}:${app.appSecret}`).toString('base64')}` },
    payload: { grant_type: 'client_credentials', ...(scope === undefined ? {} : { scope }) },
  });
  if (response.statusCode !== 200) throw new Error(`token failed: ${response.body}`);
  return (response.json() as { access_token: string }).access_token;
}

/** A member's login (password grant) as an app sends it; `request` adds headers or an address. */
export function passwordLogin(
  h: Harness,
  app: Pick<TestApp, 'appKey' | 'appSecret'>,
  account: string,
  password: string,
  request: { headers?: Record<string, string>; remoteAddress?: string } = {},
) {
  return h.app.inject({
    method: 'POST',
    url: '/oauth2/token',
    ...request,
    payload: {
      grant_type: 'password',
      client_id: app.appKey,
      client_secret: app.appSecret,
      username: account,
      password,
    },
  });
}

export async function userToken(
  h: Harness,
  app: TestApp,
  account: string,
  password: string,
): Promise<string> {
  const response = await passwordLogin(h, app, account, password);
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.body}`);
  return (response.json() as { access_token: string }).access_token;
}

export interface TestEnterprise {
  id: number;
  globalId: string;
  code: string;
  adminAccount: string;
  adminGlobalId: string;
  adminPassword: string;
}

/**
 * An enterprise with an administrator whose password is set, written straight to the tables so
 * guard tests do not depend on the order service.
 */
export async function seedEnterprise(h: Harness, name = 'Test Co'): Promise<TestEnterprise> {
  // The whole code space: a PostgreSQL run seeds thousands of enterprises into one database.
  const code = newEnterpriseCode();
  const globalId = newGlobalId();
  const enterprise = await h.database.db
    .insertInto('enterprises')
    .values({ global_id: globalId, name, code })
    .returning('id')
    .executeTakeFirstOrThrow();
  const adminPassword = 'Admin1234';
  const adminGlobalId = newGlobalId();
  await h.database.db
    .insertInto('members')
    .values({
      global_id: adminGlobalId,
      enterprise_id: enterprise.id,
      user_name: 'admin',
      account: `admin@${code}`,
      password_hash: await hashPassword(adminPassword, enterpriseTenant(enterprise.id)),
      name: 'Administrator',
      identity: 'admin',
      deleted: false,
    })
    .execute();
  return {
    id: enterprise.id,
    globalId,
    code,
    adminAccount: `admin@${code}`,
    adminGlobalId,
    adminPassword,
  };
}
