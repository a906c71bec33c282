import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { runCli } from '../support/server-process.js';
import {
  adminSession,
  expectFailure as expectMemberFailure,
  seedMember,
  type AdminSession,
} from './member-helpers.js';
import { userToken } from '../support/fixtures.js';
import {
  assetNum,
  assetRow,
  batch,
  expectFailure,
  newBuy,
  orderCall,
  orderTenant,
  postBatch,
  product,
  submit,
  type OrderTenant,
} from './order-helpers.js';

// Text an operator reads (names, operatorIdentity, remarks) must not carry what a terminal obeys:
// the surfaces refuse control characters naming the field, and the CLI escapes whatever older
// rows of the database still hold.
let h: Harness;
let tenant: OrderTenant;
let admin: AdminSession;
let cliEnv: Record<string, string>;

beforeAll(async () => {
  h = await startHarness();
  tenant = await orderTenant(h);
  admin = await adminSession(h);
  cliEnv = { KEYWARD_URL: await h.app.listen({ port: 0, host: '127.0.0.1' }), KEYWARD_ADMIN_KEY: ADMIN_KEY };
});
afterAll(async () => h.close());

/** What a terminal obeys, but the tab and newline the CLI lays its lines out with. */
// eslint-disable-next-line no-control-regex -- finding them is the point
const OBEYED = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

const FORGED: Array<[string, string]> = [
  ['ESC', 'ops\u001b[2J'],
  ['CR and LF', 'ops\r\n2030-01-01T00:00:00.000Z\tasset.unlock'],
  ['a C1 CSI', 'ops\u009b31m'],
  ['DEL', 'ops\u007f'],
];

describe('the order service refuses control characters', () => {
  it.each(FORGED)(
    'refuses an operatorIdentity with %s with 13004 naming it, changing nothing',
    async (_what, operator) => {
      const num = assetNum();
      await submit(
        h,
        tenant,
        batch(tenant, [
          newBuy({
            licenseType: 'normal_recover_usbkey',
            assets: [{ assetNos: [num], products: [product()] }],
          }),
        ]),
      );
      const response = await orderCall(h, tenant, 'POST', '/asset/lock', {
        assetNums: [num],
        operatorIdentity: operator,
      });
      expectFailure(response, '13004', /^operatorIdentity: must not contain the character U\+00[0-9A-F]{2}$/);
      expect((await assetRow(h, num))?.locked).toBe(false);
      const audited = await h.database.db
        .selectFrom('audit_log')
        .select('id')
        .where('subject', '=', num)
        .execute();
      expect(audited).toEqual([]);
    },
  );

  it('names the place of a control character deep in a batch', async () => {
    const response = await postBatch(h, tenant, batch(tenant, [newBuy({ customerName: 'Acme\nLtd' })]));
    expectFailure(response, '13004', 'orderList[0].customerName: must not contain the character U+000A');
  });
});

describe('the member center refuses control characters', () => {
  it('refuses a member name with LF in member op 1 with 40000 naming it, adding no one', async () => {
    const userName = uniqueCode('u');
    const response = await admin.call('POST', `/enterprise/${admin.enterprise.globalId}/member`, {
      userList: [
        { userName: uniqueCode('u'), password: 'Member123', name: 'Fine', departmentId: 1 },
        { userName, password: 'Member123', name: 'Ann\nadmin', departmentId: 1 },
      ],
    });
    expectMemberFailure(response, '40000', 'userList[1].name: must not contain the character U+000A');
    const added = await h.database.db
      .selectFrom('members')
      .select('id')
      .where('enterprise_id', '=', admin.enterprise.id)
      .where('identity', '=', 'member')
      .execute();
    expect(added).toEqual([]);
  });

  it('refuses ESC in a remark when editing a member', async () => {
    const response = await admin.call(
      'PUT',
      `/enterprise/${admin.enterprise.globalId}/member/${admin.enterprise.adminGlobalId}`,
      { name: 'Boss', departmentId: 1, remark: 'see \u001b]8;;http://evil\u0007here' },
    );
    expectMemberFailure(response, '40000', 'remark: must not contain the character U+001B');
  });
});

describe('the login', () => {
  it('still takes a password that holds a control character, set before they were refused', async () => {
    const member = await seedMember(h, admin.enterprise, { password: 'Old\tpass1' });
    expect(await userToken(h, admin.app, member.account, 'Old\tpass1')).toEqual(expect.any(String));
  });
});

describe('the admin API refuses control characters', () => {
  it('refuses an application name with ESC with 400 naming it', async () => {
    const response = await h.app.inject({
      method: 'POST',
      url: '/admin/apps',
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { name: 'crm\u001b[31m', scopes: ['auth_order'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: 'name: must not contain the character U+001B' });
  });
});

describe('the CLI escapes what the database holds', { timeout: 90_000 }, () => {
  it('prints one line per audit row, its control characters escaped', async () => {
    const subject = uniqueCode('K');
    // Rows as older versions could write them.
    await h.database.db
      .insertInto('audit_log')
      .values([
        {
          action: 'asset.lock',
          operator: 'ops\r\n1999-01-01\tforged',
          subject,
          detail: '{}',
          request_id: 'r1',
        },
        {
          action: 'asset.unlock',
          operator: 'ops\u001b[2J\u009b1m\u007f',
          subject,
          detail: '{}',
          request_id: 'r2',
        },
      ])
      .execute();
    const result = await runCli(['audit', '--subject', subject], cliEnv);
    expect(result.code, result.stderr).toBe(0);
    const [header, ...lines] = result.stdout.trimEnd().split('\n');
    expect(header).toBe('time\taction\tsubject\toperator\trequestId\tclientRequestId\toperatorId');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('\tops\\x1b[2J\\x9b1m\\x7f\t');
    expect(lines[1]).toContain('\tops\\x0d\\x0a1999-01-01\\x09forged\t');
    expect(result.stdout).not.toMatch(OBEYED);

    const json = await runCli(['audit', '--subject', subject, '--json'], cliEnv);
    expect(json.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(json.stdout).not.toMatch(OBEYED);
    const parsed = JSON.parse(json.stdout) as Array<{ operator: string }>;
    expect(parsed.map((e) => e.operator)).toEqual([
      'ops\u001b[2J\u009b1m\u007f',
      'ops\r\n1999-01-01\tforged',
    ]);
  });

  it('escapes names in app list and enterprise show', async () => {
    const appKey = uniqueCode('kw_');
    await h.database.db
      .insertInto('apps')
      .values({
        id: newGlobalId(),
        app_key: appKey,
        secret_hash: 'x',
        name: 'crm\nkw_fake\tactive',
        scopes: ['auth_order'],
        channels: [],
        status: 'active',
      })
      .execute();
    const listed = await runCli(['app', 'list'], cliEnv);
    const mine = listed.stdout
      .split('\n')
      .filter((line) => line.includes(appKey) || line.includes('kw_fake'));
    expect(mine).toEqual([
      `${appKey}\tactive\tauth_order\t-\t0\tfalse\tfalse\tdefault\tcrm\\x0akw_fake\\x09active`,
    ]);

    const enterprise = newGlobalId();
    await h.database.db
      .insertInto('enterprises')
      .values({ global_id: enterprise, name: 'Acme\radminAccount: root', code: uniqueCode('').slice(0, 6) })
      .execute();
    const shown = await runCli(['enterprise', 'show', enterprise], cliEnv);
    expect(shown.stdout).toContain('enterpriseName:     Acme\\x0dadminAccount: root\n');
  });
});
