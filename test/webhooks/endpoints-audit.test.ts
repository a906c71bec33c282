import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.repository.js';
import { appIdOf, audit, expectNoSecrets, history } from '../http/audit-helpers.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

// An app's changes to its own webhook endpoints are audited with the app as actor, in the change's
// transaction: never a secret (nor the URL's path, often the receiver's own token), no webhook
// event, and nothing at all for a refused call.

let h: Harness;
let app: TestApp;
let appId: string;
let token: string;

beforeAll(async () => {
  h = await startHarness();
  app = await createTestApp(h, { scopes: ['auth_webhooks'] });
  appId = await appIdOf(h, app.appKey);
  token = await appToken(h, app);
});
afterAll(async () => h.close());

interface Reply {
  statusCode: number;
  body: { code: number | string; message: string; data?: Record<string, unknown> };
}

async function call(
  method: 'POST' | 'PATCH' | 'DELETE',
  path: string,
  payload?: object,
  options: { as?: string; clientRequestId?: string } = {},
): Promise<Reply> {
  const response = await h.app.inject({
    method,
    url: `/v1/webhooks${path}?g_nonce=${nonce()}`,
    headers: {
      authorization: `Bearer ${options.as ?? token}`,
      ...(options.clientRequestId === undefined ? {} : { 'x-request-id': options.clientRequestId }),
    },
    ...(payload === undefined ? {} : { payload }),
  });
  return { statusCode: response.statusCode, body: response.json() };
}

async function create(url: string, as = token): Promise<{ id: string; secret: string }> {
  const reply = await call('POST', '/endpoints', { url, eventTypes: ['order.completed'] }, { as });
  expect(reply.body.code, reply.body.message).toBe(0);
  return reply.body.data as { id: string; secret: string };
}

/** Every endpoint row of an app, newest first (the `app` filter takes its key). */
const endpointRows = (appKey: string): Promise<AuditRecord[]> =>
  audit(h, { app: appKey, limit: 1000 }).then((rows) =>
    rows.filter((r) => r.action.startsWith('webhook.endpoint_')),
  );

/** Whatever the endpoint itself and the database hold now, to compare before and after a refusal. */
async function endpointState(id: string) {
  return h.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst();
}

describe('audit of /v1/webhooks/endpoints', () => {
  it('records create, update, rotate and delete with the app as actor, the endpoint as subject', async () => {
    const url = 'https://hooks.example.com/T0001/route-token-c7d1?key=query-token-9f2e';
    const created = await create(url);
    const updated = await call(
      'PATCH',
      `/endpoints/${created.id}`,
      { url: 'https://crm.example.net:8443/path-token-51aa', eventTypes: null },
      { clientRequestId: 'crm-sync-42' },
    );
    expect(updated.body.code).toBe(0);
    const reenabled = await call('PATCH', `/endpoints/${created.id}`, { enabled: true });
    expect(reenabled.body.code).toBe(0);
    const rotated = await call('POST', `/endpoints/${created.id}/rotate-secret`, { overlapSeconds: 600 });
    expect(rotated.body.code).toBe(0);
    const rotatedDefault = await call('POST', `/endpoints/${created.id}/rotate-secret`, {});
    expect(rotatedDefault.body.code).toBe(0);
    expect((await call('DELETE', `/endpoints/${created.id}`)).body.code).toBe(0);

    const entries = await history(h, created.id);
    expect(entries.map((e) => e.action)).toEqual([
      'webhook.endpoint_created',
      'webhook.endpoint_updated',
      'webhook.endpoint_updated',
      'webhook.endpoint_secret_rotated',
      'webhook.endpoint_secret_rotated',
      'webhook.endpoint_deleted',
    ]);
    for (const e of entries) {
      expect(e).toMatchObject({
        appId,
        operator: null,
        subject: created.id,
        enterpriseId: null,
        requestId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      });
    }
    expect(new Set(entries.map((e) => e.requestId)).size).toBe(entries.length);
    expect(entries.map((e) => e.clientRequestId)).toEqual([null, 'crm-sync-42', null, null, null, null]);
    expect(entries.map((e) => e.detail)).toEqual([
      { host: 'hooks.example.com', eventTypes: ['order.completed'] },
      {
        fields: ['url', 'eventTypes'],
        host: 'crm.example.net:8443',
        previousHost: 'hooks.example.com',
        eventTypes: null,
      },
      { fields: ['enabled'], previousStatus: 'enabled' },
      { overlapSeconds: 600 },
      { overlapSeconds: 86_400 },
      { host: 'crm.example.net:8443', eventTypes: null },
    ]);
    const secrets = [
      created.secret,
      (rotated.body.data as { secret: string }).secret,
      (rotatedDefault.body.data as { secret: string }).secret,
    ];
    expectNoSecrets(entries, [...secrets, 'route-token-c7d1', 'query-token-9f2e', 'path-token-51aa']);

    // Not one of the event types: none of these changes made a webhook event.
    const events = await h.database.db
      .selectFrom('webhook_events')
      .select('id')
      .where(
        'request_id',
        'in',
        entries.map((e) => e.requestId as string),
      )
      .execute();
    expect(events).toEqual([]);
  });

  it('records that an endpoint the worker disabled was enabled again', async () => {
    const endpoint = await create('https://hooks.example.com/revived');
    await h.database.db
      .updateTable('webhook_endpoints')
      .set({ status: 'disabled', disabled_reason: 'failing', consecutive_failures: 12 })
      .where('id', '=', endpoint.id)
      .execute();
    expect((await call('PATCH', `/endpoints/${endpoint.id}`, { enabled: true })).body.code).toBe(0);
    const [, enabled] = await history(h, endpoint.id);
    expect(enabled).toMatchObject({
      action: 'webhook.endpoint_updated',
      detail: { fields: ['enabled'], previousStatus: 'disabled' },
    });
  });

  it('writes nothing for a refused call: bad input, or another app’s endpoint or none', async () => {
    const mine = await create('https://hooks.example.com/mine');
    const before = await endpointRows(app.appKey);
    const stateBefore = await endpointState(mine.id);
    for (const [method, path, payload] of [
      ['POST', '/endpoints', { url: 'http://hooks.example.com/plain' }],
      ['POST', '/endpoints', { url: 'https://hooks.example.com/x', eventTypes: ['order.shipped'] }],
      ['POST', '/endpoints', { url: 'https://hooks.example.com/x', extra: 1 }],
      ['PATCH', `/endpoints/${mine.id}`, { url: 'https://10.0.0.1/private' }],
      ['PATCH', `/endpoints/${mine.id}`, { eventTypes: [] }],
      ['PATCH', `/endpoints/${mine.id}`, { enabled: false }],
      ['POST', `/endpoints/${mine.id}/rotate-secret`, { overlapSeconds: -1 }],
      ['POST', `/endpoints/${mine.id}/rotate-secret`, { overlapSeconds: 8 * 24 * 3600 }],
      ['PATCH', '/endpoints/ep_0123456789abcdef01234567', { url: 'https://hooks.example.com/x' }],
      ['DELETE', '/endpoints/ep_0123456789abcdef01234567', undefined],
      ['POST', '/endpoints/ep_0123456789abcdef01234567/rotate-secret', {}],
    ] as const) {
      const reply = await call(method, path, payload);
      expect(reply.body.code, `${method} ${path} ${JSON.stringify(payload)}`).toMatch(/^9500[01]$/);
    }
    expect(await endpointRows(app.appKey)).toEqual(before);
    expect(await endpointState(mine.id)).toEqual(stateBefore);

    // Another app's endpoint: not found, unchanged, and no row for either app.
    const other = await createTestApp(h, { scopes: ['auth_webhooks'] });
    const otherToken = await appToken(h, other);
    const theirs = await create('https://hooks.example.com/theirs', otherToken);
    const theirState = await endpointState(theirs.id);
    for (const [method, path, payload] of [
      ['PATCH', `/endpoints/${theirs.id}`, { url: 'https://hooks.example.com/taken' }],
      ['PATCH', `/endpoints/${theirs.id}`, { enabled: true }],
      ['POST', `/endpoints/${theirs.id}/rotate-secret`, {}],
      ['DELETE', `/endpoints/${theirs.id}`, undefined],
    ] as const) {
      expect((await call(method, path, payload)).body.code).toBe('95001');
    }
    expect(await endpointState(theirs.id)).toEqual(theirState);
    expect((await history(h, theirs.id)).map((e) => [e.action, e.appId])).toEqual([
      ['webhook.endpoint_created', await appIdOf(h, other.appKey)],
    ]);
    expect(await endpointRows(app.appKey)).toEqual(before);
  });

  it('writes no row for a create past the bound of 20 endpoints', async () => {
    const bounded = await createTestApp(h, { scopes: ['auth_webhooks'] });
    const boundedToken = await appToken(h, bounded);
    for (let i = 0; i < 20; i += 1) await create(`https://hooks.example.com/${i}`, boundedToken);
    const over = await call(
      'POST',
      '/endpoints',
      { url: 'https://hooks.example.com/21' },
      { as: boundedToken },
    );
    expect(over.body.code).toBe('95002');
    const rows = await endpointRows(bounded.appKey);
    expect(rows).toHaveLength(20);
    expect(rows.every((r) => r.action === 'webhook.endpoint_created')).toBe(true);
  });
});
