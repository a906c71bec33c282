import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ME_PREFIX } from '../../src/http/surface.js';
import { seedAsset, seedMember } from '../http/member-helpers.js';
import {
  appToken,
  createTestApp,
  seedEnterprise,
  userToken,
  type TestEnterprise,
} from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { apiDocument, operationName, type ApiDocument } from './support/api-operations.js';
import { FUZZ_RUNS, FUZZ_TIMEOUT_MS, fuzzOperation, type FuzzSetup } from './support/fuzz-request.js';
import { changedTables, memberTenantState, type TenantState } from './support/tenant-state.js';

const OPERATIONS = [
  'POST /enterprise/{enterpriseGlobalId}/member',
  'PUT /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}',
  'PUT /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}/resetPassword',
  'DELETE /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}',
  'GET /enterprise/{enterpriseGlobalId}/members',
  'GET /enterprise/{enterpriseGlobalId}/asset/assetNums',
  'GET /enterprise/asset/{assetId}/merchandiseProducts',
  'GET /enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys',
  'POST /enterprise/member/{memberGlobalId}/privileges',
  'POST /enterprise/member/{memberGlobalId}/borrow',
  'POST /enterprise/member/{memberGlobalId}/return',
];

// Generated calls of every member-center operation, read from /openapi.json, made by an
// enterprise's administrator: each answer is a proper envelope with one of the operation's
// documented codes, and a refused call leaves the enterprise as it was.
const BODY_LIMIT = 256 * 1024;
let h: Harness;
let doc: ApiDocument;
let session: { enterprise: TestEnterprise; appTok: string; userTok: string };
let bystander: TestEnterprise;
let bystanderBefore: TenantState;
let setup: FuzzSetup;

beforeAll(async () => {
  h = await startHarness({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  doc = await apiDocument(h, ME_PREFIX);
  const app = await createTestApp(h, { scopes: ['auth_me'] });
  const own = await seedEnterprise(h);
  session = {
    enterprise: own,
    appTok: await appToken(h, app),
    userTok: await userToken(h, app, own.adminAccount, own.adminPassword),
  };
  const { enterprise } = session;
  bystander = await seedEnterprise(h, 'Bystander Co');
  const strangers = await Promise.all([seedMember(h, bystander), seedAsset(h, bystander)]);
  // Plain members the calls may edit, reset or delete; never the administrator, whose own
  // password reset would end the session the fuzz runs in.
  const victims = await Promise.all(Array.from({ length: 6 }, () => seedMember(h, enterprise)));
  const assets = await Promise.all(Array.from({ length: 3 }, () => seedAsset(h, enterprise)));
  bystanderBefore = await memberTenantState(h.database.db, bystander);

  const userName = fc.oneof(fc.stringMatching(/^[a-z][a-z0-9]{1,12}$/), fc.string({ maxLength: 70 }));
  const user = fc.record(
    {
      userName,
      password: fc.oneof(fc.constant('Passw0rd!'), fc.string({ maxLength: 20 })),
      name: fc.string({ maxLength: 35 }),
      remark: fc.option(fc.string({ maxLength: 210 })),
      departmentId: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.string({ maxLength: 4 })),
      passwordMobile: fc.option(fc.constantFrom('13800138000', '+6591234567', '123', '', '1380013800x')),
    },
    { requiredKeys: [] },
  );
  let calls = 0;
  setup = {
    doc,
    // Both ways of carrying the app token, in turn.
    headers: () => {
      calls += 1;
      const userToken = { usertoken: session.userTok };
      if (calls % 3 === 0) return { clienttoken: session.appTok, ...userToken };
      if (calls % 3 === 1) return { authorization: `Bearer ${session.appTok}`, ...userToken };
      return { authorization: `Bearer ${session.appTok}`, clienttoken: session.appTok, ...userToken };
    },
    bodyLimitBytes: BODY_LIMIT,
    pathValues: {
      enterpriseGlobalId: fc.oneof(
        { arbitrary: fc.constant(enterprise.globalId), weight: 8 },
        { arbitrary: fc.constantFrom(bystander.globalId, uniqueCode('e')), weight: 1 },
      ),
      memberGlobalId: fc.constantFrom(
        ...victims.map((v) => v.globalId),
        strangers[0].globalId,
        uniqueCode('m'),
      ),
      assetId: fc.constantFrom(...assets.map((a) => a.id), strangers[1].id, uniqueCode('a')),
    },
    hints: {
      userList: fc.oneof(fc.array(user, { maxLength: 3 }), fc.constant(null)),
      password: fc.oneof(fc.constant('NewPassw0rd'), fc.string({ maxLength: 20 })),
      keyword: fc.string({ maxLength: 8 }),
      addAssets: fc.array(fc.constantFrom(...assets.map((a) => a.assetNum), strangers[1].assetNum), {
        maxLength: 3,
      }),
      deleteAssets: fc.array(fc.constantFrom(...assets.map((a) => a.assetNum)), { maxLength: 2 }),
      assetIDs: fc.array(fc.constantFrom(...assets.map((a) => a.id)), { maxLength: 2 }),
      borrowedUsbKey: fc.constantFrom(...assets.map((a) => a.assetNum), uniqueCode('K')),
    },
  };
});
afterAll(async () => h.close());

describe('generated bad input on the member center', () => {
  it('covers every operation of the OpenAPI document, each with its codes', () => {
    const documented = doc.operations.map((op) => operationName(op).replace(ME_PREFIX, ''));
    expect(documented.sort()).toEqual([...OPERATIONS].sort());
    for (const op of doc.operations) expect([...op.codes], operationName(op)).toContain('40000');
  });

  it.each(OPERATIONS)(
    '%s answers every generated call with an envelope and changes nothing when it refuses',
    async (name) => {
      const [method, path] = name.split(' ') as [string, string];
      const op = doc.operations.find((o) => o.method === method && o.path === `${ME_PREFIX}${path}`);
      if (!op) throw new Error(`${name} is not in the OpenAPI document`);
      const seen = await fuzzOperation(h, op, setup, () =>
        memberTenantState(h.database.db, session.enterprise),
      );
      // Most calls get past the guard: the session itself survives the fuzz.
      expect(seen.get('60005') ?? 0).toBe(0);
      expect(seen.get('70001') ?? 0).toBeLessThan(FUZZ_RUNS / 2);
    },
    FUZZ_TIMEOUT_MS,
  );

  it("leaves another enterprise's data untouched by all of it", async () => {
    const after = await memberTenantState(h.database.db, bystander);
    expect(changedTables(bystanderBefore, after)).toEqual([]);
  });
});
