import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX, ORDER_PREFIX } from '../../src/http/surface.js';
import { adminSession, type AdminSession } from '../http/member-helpers.js';
import { assetNum, batch, newBuy, orderTenant, product } from '../http/order-helpers.js';
import { appToken, createTestApp } from '../support/fixtures.js';
import { nonce, startHarness, type Harness } from '../support/harness.js';

// The cases the generated calls (fuzz-*.test.ts) found, kept as plain regression tests.
let h: Harness;
let token: string;
let channel: string;
let admin: AdminSession;

beforeAll(async () => {
  h = await startHarness();
  const orderApp = await createTestApp(h, { scopes: ['auth_order'] });
  token = await appToken(h, orderApp);
  channel = orderApp.channels[0] as string;
  admin = await adminSession(h);
});
afterAll(async () => h.close());

const order = (method: 'GET' | 'POST', path: string, payload?: object) =>
  h.app.inject({
    method,
    url: `${ORDER_PREFIX}${path}${path.includes('?') ? '&' : '?'}g_nonce=${nonce()}`,
    headers: { authorization: `Bearer ${token}` },
    ...(payload === undefined ? {} : { payload }),
  });

function expectEnvelope(
  response: { statusCode: number; headers: Record<string, unknown>; json: () => unknown },
  code: string,
  message?: string,
): void {
  expect(response.statusCode).toBe(299);
  expect(response.headers['x-request-id']).toBeTruthy();
  const body = response.json() as { code: string; message: string; cause: string };
  expect(body.code).toBe(code);
  expect(typeof body.cause).toBe('string');
  if (message !== undefined) expect(body.message).toBe(message);
}

describe('malformed paths', () => {
  it('validates a long path parameter by its schema, naming it', async () => {
    expectEnvelope(
      await order('GET', `/licenseOrder/${'a'.repeat(129)}`),
      '13004',
      'licenseOrderId: must NOT have more than 128 characters',
    );
  });

  it('answers a path parameter of any length with the envelope, never a bare 414', async () => {
    expectEnvelope(await order('GET', `/licenseOrder/${'a'.repeat(5000)}`), '13004');
    const member = await h.app.inject({
      method: 'GET',
      url: `${ME_PREFIX}/enterprise/${'e'.repeat(5000)}/members?g_nonce=${nonce()}`,
    });
    expectEnvelope(member, '40000');
  });

  it('answers a broken percent-encoding with the envelope of its surface', async () => {
    expectEnvelope(await order('GET', '/licenseOrder/%E0%A4%A'), '13004', 'path: is not a valid URL');
    const member = await h.app.inject({
      method: 'GET',
      url: `${ME_PREFIX}/enterprise/%ZZ/members?g_nonce=${nonce()}`,
    });
    expectEnvelope(member, '40000', 'path: is not a valid URL');
  });
});

describe('text PostgreSQL cannot store', () => {
  it('refuses U+0000 in a body field with 13004 naming it, and writes nothing', async () => {
    const crmCustomerId = `crm${nonce()}`;
    const response = await order('POST', '/enterprise/user/create', {
      crmCustomerId,
      customerName: 'Acme\u0000 Ltd',
    });
    expectEnvelope(response, '13004', 'customerName: must not contain the character U+0000');
    const rows = await h.database.db
      .selectFrom('customers')
      .select('id')
      .where('crm_customer_id', '=', crmCustomerId)
      .execute();
    expect(rows).toEqual([]);
  });

  it('names the place of U+0000 deep in a batch and in a list of lock numbers', async () => {
    expectEnvelope(
      await order('POST', '/asset/lock', { assetNums: ['K1', 'K2\u0000'], operatorIdentity: 'ops' }),
      '13004',
      'assetNums[1]: must not contain the character U+0000',
    );
  });

  it('refuses U+0000 in a query parameter and a path parameter', async () => {
    expectEnvelope(
      await order('GET', `/enterprise/user/query?channelCode=${channel}&channelCustomerId=a%00b`),
      '13004',
      'channelCustomerId: must not contain the character U+0000',
    );
    expectEnvelope(
      await order('GET', '/licenseOrder/abc%00def'),
      '13004',
      'licenseOrderId: must not contain the character U+0000',
    );
  });

  it('refuses U+0000 in a member-center body with 40000', async () => {
    const member = await admin.call(
      'PUT',
      `/enterprise/${admin.enterprise.globalId}/member/${admin.enterprise.adminGlobalId}`,
      {
        name: 'Ann\u0000',
      },
    );
    expectEnvelope(member as never, '40000', 'name: must not contain the character U+0000');
  });

  it('refuses U+0000 in a login as a bad request, not a server error', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/oauth2/token',
      payload: {
        grant_type: 'password',
        client_id: admin.app.appKey,
        client_secret: admin.app.appSecret,
        username: 'admin\u0000@x',
        password: 'whatever1',
      },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ error: 'invalid_request' });
  });

  it('finds U+0000 in an ignored field nested thousands deep without exhausting the stack', async () => {
    const deep = `${'{"a":'.repeat(20_000)}"x\\u0000"${'}'.repeat(20_000)}`;
    const response = await h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/shellnums?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      payload: `{"size":1,"extra":${deep}}`,
    });
    expectEnvelope(response, '13004');
  });
});

describe('the codes the OpenAPI document lists', () => {
  async function documentedCodes(method: string, path: string): Promise<string[]> {
    const doc = (await h.app.inject({ method: 'GET', url: '/openapi.json' })).json() as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const failure = doc.paths[`${ME_PREFIX}${path}`]?.[method]?.responses['299'] as {
      content: { 'application/json': { schema: { properties: { code: { enum: string[] } } } } };
    };
    return failure.content['application/json'].schema.properties.code.enum;
  }

  it('include what editing a member answers for an empty name and a bad mobile', async () => {
    const path = `/enterprise/${admin.enterprise.globalId}/member/${admin.enterprise.adminGlobalId}`;
    const codes = await documentedCodes('put', '/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}');
    const empty = (await admin.call('PUT', path, { name: '' })).json() as { code: string };
    const mobile = (await admin.call('PUT', path, { passwordMobile: '12' })).json() as { code: string };
    expect([empty.code, mobile.code]).toEqual(['40022', '10004']);
    expect(codes).toEqual(expect.arrayContaining(['40022', '10004']));
  });

  it('include 40000 on every member-center operation, which any malformed parameter answers', async () => {
    const response = await admin.call(
      'DELETE',
      `/enterprise/${admin.enterprise.globalId}/member/${'m'.repeat(101)}`,
    );
    expect((response.json() as { code: string }).code).toBe('40000');
    expect(
      await documentedCodes('delete', '/enterprise/{enterpriseGlobalId}/member/{memberGlobalId}'),
    ).toContain('40000');
    expect(await documentedCodes('get', '/enterprise/{enterpriseGlobalId}/asset/assetNums')).toContain(
      '40000',
    );
  });
});

describe('deeply nested merchandise', () => {
  /** A chain of `depth` merchandise levels with one product at the bottom, as JSON text. */
  function chain(depth: number): string {
    const leaf = JSON.stringify({ merchandiseNum: 'leaf', licenseOrderProductList: [product()] });
    return `${'{"merchandiseNum":"m","children":['.repeat(depth - 1)}${leaf}${']}'.repeat(depth - 1)}`;
  }
  async function orderWith(depth: number) {
    const tenant = await orderTenant(h);
    const body = JSON.stringify(
      batch(tenant, [newBuy({ assets: [{ assetNos: [assetNum()], merchandises: [] }] })]),
    );
    return h.app.inject({
      method: 'POST',
      url: `${ORDER_PREFIX}/licenseOrder/batchOrder?appKey=${tenant.app.appKey}&g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      payload: body.replace('"merchandises":[]', `"merchandises":[${chain(depth)}]`),
    });
  }

  it('accepts a merchandise tree 32 levels deep', async () => {
    const response = await orderWith(32);
    expect(response.statusCode, response.body).toBe(200);
  });

  it('refuses a deeper tree with 13004 naming the asset, however deep, instead of exhausting the stack', async () => {
    for (const depth of [33, 1_000, 20_000]) {
      expectEnvelope(
        await orderWith(depth),
        '13004',
        'orderList[0].assets[0].merchandises: nested deeper than 32 levels',
      );
    }
  });
});
