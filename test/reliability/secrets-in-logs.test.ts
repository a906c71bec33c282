import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../support/database.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import {
  adminCall,
  appToken,
  call,
  createApp,
  createEnterprise,
  freshId,
  ME,
  memberHeaders,
  memberToken,
  ORDER,
  orderHeaders,
  postBatch,
  purchaseBatch,
  type LiveApp,
} from './support/live-api.js';

// A whole scenario against a real server logging at debug level: no secret, password, token,
// password hash or stack trace may appear in its log, nor in any answer that is not meant to
// carry it (the secret of `app create`, the token of /oauth2/token).
const url = testDatabaseUrl();
const ADMIN_KEY = randomBytes(24).toString('hex');
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'keyward-logs-'));
let server: ServerProcess;

/** Every answer the scenario received, by URL. */
const answers: Array<{ url: string; body: string }> = [];
const realFetch = globalThis.fetch;

beforeAll(async () => {
  globalThis.fetch = async (input, init) => {
    const response = await realFetch(input, init);
    answers.push({
      url: String(input instanceof Request ? input.url : input),
      body: await response.clone().text(),
    });
    return response;
  };
  server = await startServerProcess({
    DATABASE_URL: url ?? '',
    DATA_DIR: dataDir,
    KEYWARD_ADMIN_KEY: ADMIN_KEY,
    LOG_LEVEL: 'debug',
  });
});
afterAll(async () => {
  globalThis.fetch = realFetch;
  if (server.child.exitCode === null) await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

async function scenario(base: string): Promise<string[]> {
  const secrets: string[] = [ADMIN_KEY];
  const first: LiveApp = await createApp(base, ADMIN_KEY);
  secrets.push(first.appSecret, await appToken(base, first));
  const rotated = await adminCall<{ appSecret: string }>(
    base,
    ADMIN_KEY,
    'POST',
    `/apps/${first.appKey}/rotate-secret`,
  );
  const app = { ...first, appSecret: rotated.appSecret };
  secrets.push(app.appSecret);

  // Client authentication in the body, and a wrong secret.
  const inBody = await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      grant_type: 'client_credentials',
      client_id: app.appKey,
      client_secret: app.appSecret,
    }),
  });
  secrets.push(((await inBody.json()) as { access_token: string }).access_token);
  const wrongSecret = `Wrong-${randomBytes(8).toString('hex')}`;
  secrets.push(wrongSecret);
  await fetch(`${base}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `grant_type=client_credentials&client_id=${app.appKey}&client_secret=${wrongSecret}`,
  });

  const token = await appToken(base, app);
  secrets.push(token);
  const enterprise = await createEnterprise(base, ADMIN_KEY, app, token);
  secrets.push(enterprise.adminPassword, enterprise.adminToken);
  const admin = memberHeaders(token, enterprise.adminToken);

  // Members added with passwords, one refused while carrying one.
  const memberPassword = `Mp-${randomBytes(5).toString('hex')}`;
  const refusedPassword = `Rp-${randomBytes(5).toString('hex')}`;
  secrets.push(memberPassword, refusedPassword);
  const userName = freshId('u');
  const added = await call<{ succeeded: Array<{ globalId: string; userName: string }> }>(
    base,
    'POST',
    `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member`,
    {
      headers: admin,
      body: {
        userList: [
          { userName, password: memberPassword, name: 'Logged', departmentId: 1 },
          { userName: 'not valid!', password: refusedPassword, name: 'Refused', departmentId: 1 },
        ],
      },
    },
  );
  expect(added.code).toBe('60027');
  const member = added.data.succeeded[0] as { globalId: string; userName: string };
  secrets.push(await memberToken(base, app, member.userName, memberPassword));
  const guess = `Guess-${randomBytes(5).toString('hex')}`;
  secrets.push(guess);
  await memberToken(base, app, member.userName, guess).catch(() => undefined);

  const resetTo = `Rs-${randomBytes(5).toString('hex')}`;
  secrets.push(resetTo);
  const reset = await call(
    base,
    'PUT',
    `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member/${member.globalId}/resetPassword`,
    { headers: admin, body: { password: resetTo } },
  );
  expect(reset.code, reset.body).toBe(0);
  const tooShort = `S${randomBytes(2).toString('hex')}`;
  secrets.push(tooShort);
  await call(
    base,
    'PUT',
    `${ME}/enterprise/${enterprise.enterpriseGlobalId}/member/${member.globalId}/resetPassword`,
    {
      headers: admin,
      body: { password: tooShort },
    },
  );
  const operatorPassword = `Op-${randomBytes(5).toString('hex')}`;
  secrets.push(operatorPassword);
  await adminCall(base, ADMIN_KEY, 'POST', '/members/password', {
    account: member.userName,
    password: operatorPassword,
  });

  // The order service, a refused call and forged tokens.
  expect((await postBatch(base, app, token, purchaseBatch(app, { orders: 2, assets: 2 }).body)).code).toBe(0);
  await call(base, 'POST', `${ORDER}/licenseOrder/batchOrder?appKey=${app.appKey}`, {
    headers: orderHeaders(token),
    body: { channelCode: app.channel, orderList: 'nonsense' },
  });
  const forged = randomBytes(32).toString('base64url');
  secrets.push(forged);
  await call(base, 'POST', `${ORDER}/shellnums`, { headers: orderHeaders(forged), body: { size: 1 } });
  await call(base, 'GET', `${ME}/enterprise/${enterprise.enterpriseGlobalId}/members`, {
    headers: { clienttoken: token, usertoken: forged },
  });
  await call(base, 'GET', `${ME}/enterprise/${enterprise.enterpriseGlobalId}/members`, { headers: admin });
  await fetch(`${base}/metrics`);

  // Credentials wrongly put in a query string: the logged URL must not carry them.
  await fetch(
    `${base}/oauth2/token?grant_type=client_credentials&client_id=${app.appKey}&client_secret=${app.appSecret}`,
    { method: 'POST' },
  );
  await fetch(`${base}/admin/apps?key=${ADMIN_KEY}`);
  await fetch(`${base}/admin/apps?access_token=${ADMIN_KEY}&password=${operatorPassword}`);
  await call(
    base,
    'GET',
    `${ME}/enterprise/${enterprise.enterpriseGlobalId}/members?clientToken=${token}&userToken=${enterprise.adminToken}`,
  );
  // A caller's own request id, logged beside the server's.
  await fetch(`${base}/healthz`, { headers: { 'x-request-id': 'caller-trace-7' } });
  // The runtime's signing keys: rotated, listed and published (their private halves are read below).
  await adminCall(base, ADMIN_KEY, 'POST', '/runtime/keys/rotate');
  await adminCall(base, ADMIN_KEY, 'GET', '/runtime/keys');
  await fetch(`${base}/.well-known/jwks.json`);
  const keyFile = JSON.parse(fs.readFileSync(path.join(dataDir, 'runtime-keys.json'), 'utf8')) as {
    keys: Array<{ privateJwk: { d: string } }>;
  };
  expect(keyFile.keys).toHaveLength(2);
  secrets.push(...keyFile.keys.map((k) => k.privateJwk.d));
  return secrets;
}

describe('secrets in logs and answers', () => {
  it('never logs or answers a secret, password, token, hash or stack trace', async () => {
    const secrets = await scenario(server.url);
    await server.stop();
    const log = server.output();
    // The scenario was logged, request by request: one line each, when it completed.
    expect(log.split('\n').filter((line) => line.includes('"responseTime"')).length).toBeGreaterThan(20);

    for (const secret of secrets) expect(log.includes(secret), `the log holds ${secret}`).toBe(false);
    expect(log).not.toContain('$argon2');
    expect(log).not.toContain('    at ');
    expect(log).toContain('client_secret=[redacted]');
    expect(log).toContain('?key=[redacted]');

    const traced = log
      .split('\n')
      .filter((line) => line.includes('"clientRequestId":"caller-trace-7"'))
      .map((line) => JSON.parse(line) as { reqId: string; msg: string });
    expect(traced.map((line) => line.msg)).toContainEqual(expect.stringMatching(/^GET \/healthz 200 /));
    for (const line of traced) expect(line.reqId).toMatch(/^[0-9a-f-]{36}$/);

    for (const answer of answers) {
      // Only `app create`/`rotate-secret` show a secret and /oauth2/token a token, each its own.
      const carrier = /\/admin\/apps|\/oauth2\/token/.test(answer.url);
      for (const secret of secrets) {
        if (!carrier) expect(answer.body.includes(secret), `${answer.url} answers ${secret}`).toBe(false);
      }
      expect(answer.body, answer.url).not.toContain('$argon2');
      expect(answer.body, answer.url).not.toContain('    at ');
    }
  });
});
