import { ADMIN_PASSWORD, CHANNEL, TARGET_TENANT } from './settings.js';
import { adminAccount } from './seed.js';

/** What the scenarios authenticate with, obtained the way a client obtains it. */
export interface Session {
  appKey: string;
  appToken: string;
  /** The target enterprise's administrator. */
  userToken: string;
}

async function json<T>(response: Response): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${response.url}: HTTP ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

/** An app with all three scopes (admin API), its token, and the administrator's password and login. */
export async function openSession(url: string, adminKey: string): Promise<Session> {
  const admin = { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' };
  const app = await json<{ appKey: string; appSecret: string }>(
    await fetch(`${url}/admin/apps`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({
        name: 'bench',
        scopes: ['auth_order', 'auth_me', 'auth_runtime'],
        channels: [CHANNEL],
      }),
    }),
  );
  await json(
    await fetch(`${url}/admin/members/password`, {
      method: 'POST',
      headers: admin,
      body: JSON.stringify({ account: adminAccount(TARGET_TENANT), password: ADMIN_PASSWORD }),
    }),
  );
  const token = async (form: Record<string, string>) =>
    (
      await json<{ access_token: string }>(
        await fetch(`${url}/oauth2/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ client_id: app.appKey, client_secret: app.appSecret, ...form }),
        }),
      )
    ).access_token;
  return {
    appKey: app.appKey,
    appToken: await token({ grant_type: 'client_credentials' }),
    userToken: await token({
      grant_type: 'password',
      username: adminAccount(TARGET_TENANT),
      password: ADMIN_PASSWORD,
    }),
  };
}
