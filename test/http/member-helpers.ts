import { randomInt } from 'node:crypto';
import { expect } from 'vitest';
import { enterpriseTenant, hashPassword } from '../../src/domain/shared/passwords.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { ME_PREFIX } from '../../src/http/surface.js';
import {
  appToken,
  createTestApp,
  passwordLogin,
  seedEnterprise,
  userToken,
  type TestApp,
  type TestEnterprise,
} from '../support/fixtures.js';
import { nonce, type Harness } from '../support/harness.js';

export interface Envelope<T> {
  code: number | string;
  message: string;
  data?: T;
  cause?: string;
}

type Reply = { statusCode: number; json: () => unknown };

export function expectFailure(response: Reply, code: string, message?: string): Envelope<unknown> {
  const body = response.json() as Envelope<unknown>;
  expect(response.statusCode, JSON.stringify(body)).toBe(299);
  expect(body.code).toBe(code);
  if (message !== undefined) expect(body.message).toBe(message);
  return body;
}

export function dataOf<T>(response: Reply): T {
  const body = response.json() as Envelope<T>;
  expect(response.statusCode, JSON.stringify(body)).toBe(200);
  expect(body.code).toBe(0);
  expect(body.message).toBe('success');
  return body.data as T;
}

export type MemberCall = (
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  path: string,
  payload?: unknown,
  query?: Record<string, string>,
) => Promise<Reply & { body: string }>;

/** Member-center calls as one user, through one app, each with a fresh nonce. */
export function memberCalls(h: Harness, appTok: string, userTok: string): MemberCall {
  return (method, path, payload, query = {}) =>
    h.app.inject({
      method,
      url: `${ME_PREFIX}${path}?${new URLSearchParams({ ...query, g_nonce: nonce() }).toString()}`,
      headers: { authorization: `Bearer ${appTok}`, usertoken: userTok },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
}

export interface AdminSession {
  app: TestApp;
  appTok: string;
  enterprise: TestEnterprise;
  call: MemberCall;
}

/** A fresh enterprise and its administrator, logged in through a fresh app. */
export async function adminSession(h: Harness): Promise<AdminSession> {
  const app = await createTestApp(h, { scopes: ['auth_me'] });
  const enterprise = await seedEnterprise(h);
  const appTok = await appToken(h, app);
  const userTok = await userToken(h, app, enterprise.adminAccount, enterprise.adminPassword);
  return { app, appTok, enterprise, call: memberCalls(h, appTok, userTok) };
}

export interface SeededMember {
  id: number;
  globalId: string;
  account: string;
  password: string;
}

/** A plain member written straight to the table, with a usable password. */
export async function seedMember(
  h: Harness,
  enterprise: TestEnterprise,
  fields: { userName?: string; name?: string; departmentId?: number | null; password?: string } = {},
): Promise<SeededMember> {
  const userName = fields.userName ?? `u${randomInt(1e9)}`;
  const password = fields.password ?? 'Member123';
  const account = `${userName}@${enterprise.code}`;
  const row = await h.database.db
    .insertInto('members')
    .values({
      global_id: newGlobalId(),
      enterprise_id: enterprise.id,
      user_name: userName,
      account,
      password_hash: await hashPassword(password, enterpriseTenant(enterprise.id)),
      name: fields.name ?? userName,
      department_id: fields.departmentId === undefined ? 1 : fields.departmentId,
      identity: 'member',
      deleted: false,
    })
    .returning(['id', 'global_id'])
    .executeTakeFirstOrThrow();
  return { id: row.id, globalId: row.global_id, account, password };
}

/** A customer of the enterprise holding an asset, optionally assigned to a member. */
export async function seedAsset(
  h: Harness,
  enterprise: TestEnterprise,
  options: { memberId?: number; revoked?: boolean; assetNum?: string } = {},
): Promise<{ id: string; assetNum: string }> {
  const db = h.database.db;
  const customerId = newGlobalId();
  await db
    .insertInto('customers')
    .values({ id: customerId, enterprise_id: enterprise.id, is_default: false, gongxin: false })
    .execute();
  const id = newGlobalId();
  const assetNum = options.assetNum ?? `9${String(randomInt(1e9)).padStart(9, '0')}`;
  await db
    .insertInto('assets')
    .values({
      id,
      asset_num: assetNum,
      license_type: 'cloud_account',
      customer_id: customerId,
      grantable: true,
      locked: false,
      freezing: false,
      borrowed_usb_key: false,
      transfered_asset_num: false,
      revoked: options.revoked ?? false,
    })
    .execute();
  if (options.memberId !== undefined) {
    await db.insertInto('asset_assignments').values({ asset_id: id, member_id: options.memberId }).execute();
  }
  return { id, assetNum };
}

export async function loginStatus(
  h: Harness,
  app: TestApp,
  account: string,
  password: string,
): Promise<{ statusCode: number; body: Record<string, unknown> }> {
  const response = await passwordLogin(h, app, account, password);
  return { statusCode: response.statusCode, body: response.json() as Record<string, unknown> };
}
