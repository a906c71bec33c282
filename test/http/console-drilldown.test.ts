import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorLinks } from '../../src/http/console/operator/links.js';
import { operatorClient, type ConsoleClient } from '../support/console-client.js';
import { userToken } from '../support/fixtures.js';
import { ADMIN_KEY, startHarness, uniqueCode, type Harness } from '../support/harness.js';
import { addMember, assign, buy, okData, productSpec } from '../support/order-fixtures.js';
import {
  checkIn,
  checkOut,
  fingerprint,
  leaseOf,
  runtimeWorld,
  type RuntimeWorld,
} from './runtime-helpers.js';

// The operator's drill-down (issue 41): dashboard → enterprise → its licenses → one license's
// machines → that machine's lease, each one click; and the side bar's search, which opens the page
// of any identifier an operator is handed.

let h: Harness;
let world: RuntimeWorld;
let op: ConsoleClient;
let assetNum: string;
let licenseOrderId: string;
let liveLease: string;
let endedLease: string;
let member: { globalId: string; account: string };
const fpLive = fingerprint();
const fpEnded = fingerprint();
const fpMember = fingerprint();
const product = productSpec({ productName: 'Drill Modeler', limitConcurrent: 5 });

/** Where a search for `q` leads: the page it redirects to, or undefined when it lists or finds none. */
async function searchLeadsTo(q: string): Promise<string | undefined> {
  const found = await op.get(operatorLinks.search(q));
  expect([200, 303], found.body.slice(0, 300)).toContain(found.statusCode);
  return found.statusCode === 303 ? String(found.headers.location) : undefined;
}

beforeAll(async () => {
  h = await startHarness();
  world = await runtimeWorld(h);
  op = await operatorClient(h);
  assetNum = `A${uniqueCode('').slice(-10)}`;
  licenseOrderId = await buy(world, [{ assetNos: [assetNum], products: [product] }]);
  liveLease = leaseOf(
    await checkOut(world, { assetNum, crmProductId: product.crmProductId as string, fingerprint: fpLive }),
  ).leaseId;
  endedLease = leaseOf(
    await checkOut(world, { assetNum, crmProductId: product.crmProductId as string, fingerprint: fpEnded }),
  ).leaseId;
  leaseOf(await checkIn(world, { leaseId: endedLease }, fpEnded));
  const added = await addMember(world);
  member = { globalId: added.globalId, account: added.account };
  await assign(world, added.globalId, [assetNum]);
  const token = await userToken(h, world.app, added.account, added.password);
  leaseOf(
    await checkOut(world, { crmProductId: product.crmProductId as string, fingerprint: fpMember }, token),
  );
});
afterAll(async () => h?.close());

describe('one click from an enterprise to its licenses, their machines and a lease', () => {
  it("the enterprise's page lists its licenses with seats, machines now, usage and recent changes", async () => {
    const page = await op.get(operatorLinks.enterprise(world.enterpriseGlobalId));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`href="${operatorLinks.asset(assetNum)}"`);
    const row = page.body.split(`data-asset="${assetNum}"`)[1]?.split('</tr>')[0] ?? '';
    expect(row).toContain('Drill Modeler');
    // Two machines hold seats of it (the lock's and the employee's); the checked-in one does not.
    expect(row).toContain('data-seats-used="2"');
    expect(row).toContain('2 of 5');
    expect(page.body).toMatch(/data-machines-online="2" data-machines-offline="0"/);
    expect(page.body).toContain(`href="${operatorLinks.enterpriseUsage(world.enterpriseGlobalId)}"`);
    expect(page.body).toContain('data-recent-audit');
    expect(page.body).toContain('<code>order.accepted</code>');
  });

  it("the asset's page lists the machines, those holding a seat first, each a link to its lease", async () => {
    const page = await op.get(operatorLinks.asset(assetNum));
    expect(page.statusCode).toBe(200);
    const leases = [...page.body.matchAll(/<tr data-lease="([^"]+)" data-holding="(true|false)"/g)].map(
      (m) => [m[1], m[2]],
    );
    expect(leases.slice(0, 2).every(([, holding]) => holding === 'true')).toBe(true);
    expect(leases).toContainEqual([liveLease, 'true']);
    expect(leases).toContainEqual([endedLease, 'false']);
    expect(leases.at(-1)).toEqual([endedLease, 'false']);
    expect(page.body).toContain(`href="${operatorLinks.lease(liveLease)}"`);
    expect(page.body).toContain(`href="${operatorLinks.enterprise(world.enterpriseGlobalId)}"`);
    expect(page.body).toContain(`href="${operatorLinks.member(member.globalId)}"`);
  });

  it("the lease's page shows every field and links up to its asset, enterprise and app", async () => {
    const page = await op.get(operatorLinks.lease(endedLease));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('data-holding="false"');
    expect(page.body).toContain(fpEnded);
    expect(page.body).toContain('checked in');
    expect(page.body).toContain(`href="${operatorLinks.asset(assetNum)}"`);
    expect(page.body).toContain(`href="${operatorLinks.enterprise(world.enterpriseGlobalId)}"`);
    expect(page.body).toContain(`href="${operatorLinks.app(world.app.appKey)}"`);
    const live = await op.get(operatorLinks.lease(liveLease));
    expect(live.body).toContain('data-holding="true"');
  });

  it("the employee's page shows their assets and the machines they ran", async () => {
    const page = await op.get(operatorLinks.member(member.globalId));
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(member.account);
    expect(page.body).toContain(`href="${operatorLinks.asset(assetNum)}"`);
    expect(page.body).toMatch(/<tr data-lease="[^"]+" data-holding="true"/);
  });

  it("the order's page shows the batch and links the assets it licensed", async () => {
    const to = await searchLeadsTo(licenseOrderId);
    expect(to).toMatch(/^\/console\/operator\/orders\//);
    const page = await op.get(to as string);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`data-order="${licenseOrderId}"`);
    expect(page.body).toContain(`href="${operatorLinks.asset(assetNum)}"`);
  });

  it('answers 404 for what does not exist, on every drill-down page', async () => {
    for (const url of [
      operatorLinks.asset('nosuch-asset'),
      operatorLinks.lease('nosuch-lease'),
      operatorLinks.member('nosuch-member'),
      operatorLinks.order('nosuch-order'),
      operatorLinks.operator('nosuch-operator'),
      operatorLinks.enterprise('nosuch-enterprise'),
    ]) {
      const page = await op.get(url);
      expect(page.statusCode, url).toBe(404);
    }
  });

  it('refuses a control character in an id or a search with 400, never reaching the database', async () => {
    for (const url of [
      operatorLinks.search('a\u0000b'),
      operatorLinks.asset('a\u0000b'),
      operatorLinks.lease('a\u0000b'),
      operatorLinks.member('a\u0000b'),
      operatorLinks.order('a\u0000b'),
      operatorLinks.operator('a\u0000b'),
    ]) {
      const page = await op.get(url);
      expect(page.statusCode, url).toBe(400);
    }
  });

  it('is behind the operator sign-in', async () => {
    for (const url of [
      operatorLinks.asset(assetNum),
      operatorLinks.lease(liveLease),
      operatorLinks.search(assetNum),
    ]) {
      const page = await h.app.inject({ method: 'GET', url });
      expect(page.statusCode, url).toBe(303);
      expect(String(page.headers.location)).toMatch(/sign-in/);
    }
  });
});

describe('the side bar search', () => {
  it('is on every operator page', async () => {
    const page = await op.get('/console/operator');
    expect(page.body).toContain('class="sidebar-search"');
  });

  it('opens the page of each identifier an operator is handed', async () => {
    expect(await searchLeadsTo(assetNum)).toBe(operatorLinks.asset(assetNum));
    expect(await searchLeadsTo(`  ${assetNum}  `)).toBe(operatorLinks.asset(assetNum));
    expect(await searchLeadsTo(liveLease)).toBe(operatorLinks.lease(liveLease));
    expect(await searchLeadsTo(world.app.appKey)).toBe(operatorLinks.app(world.app.appKey));
    expect(await searchLeadsTo(world.enterpriseCode)).toBe(
      operatorLinks.enterprise(world.enterpriseGlobalId),
    );
    expect(await searchLeadsTo(world.enterpriseGlobalId)).toBe(
      operatorLinks.enterprise(world.enterpriseGlobalId),
    );
    expect(await searchLeadsTo(member.account.toUpperCase())).toBe(operatorLinks.member(member.globalId));
  });

  it('finds an enterprise by the beginning of its name, and lists several that share it', async () => {
    const stem = uniqueCode('Searchable ');
    const bound: string[] = [];
    for (const suffix of ['Alpha', 'Beta']) {
      const data = okData<{ enterpriseGlobalId: string }>(
        await world.order('POST', '/enterprise/user/bind', {
          channelCode: world.channel,
          channelCustomerId: uniqueCode('cc'),
          customerName: `${stem} ${suffix}`,
          enterpriseName: `${stem} ${suffix}`,
        }),
      );
      bound.push(data.enterpriseGlobalId);
    }
    expect(await searchLeadsTo(`${stem} alp`)).toBe(operatorLinks.enterprise(bound[0] as string));
    const listed = await op.get(operatorLinks.search(stem.toLowerCase()));
    expect(listed.statusCode).toBe(200);
    for (const id of bound) expect(listed.body).toContain(`href="${operatorLinks.enterprise(id)}"`);
  });

  it('says what it searches when nothing matches, and a wildcard is only itself', async () => {
    // Other files on a shared database may bind enterprises whose names begin with "%" or "_",
    // so the wildcards are tried after a name only this test knows: as wildcards they would match it.
    const stem = uniqueCode('Wild');
    const bound = okData<{ enterpriseGlobalId: string }>(
      await world.order('POST', '/enterprise/user/bind', {
        channelCode: world.channel,
        channelCustomerId: uniqueCode('cc'),
        customerName: `${stem}Alpha`,
        enterpriseName: `${stem}Alpha`,
      }),
    );
    expect(await searchLeadsTo(`${stem}Al`)).toBe(operatorLinks.enterprise(bound.enterpriseGlobalId));
    for (const q of ['nothing-is-called-this', `${stem}%`, `${stem}_lpha`, `${stem}\\`, 'x'.repeat(500)]) {
      const page = await op.get(operatorLinks.search(q));
      expect(page.statusCode, q).toBe(200);
      expect(page.body).toContain('An asset or lock number');
      expect(page.body).not.toContain('data-hit=');
    }
    for (const q of ['%', '_']) {
      const page = await op.get(operatorLinks.search(q));
      expect([200, 303], q).toContain(page.statusCode);
      expect(`${page.headers.location ?? ''}${page.body}`).not.toContain(
        operatorLinks.enterprise(bound.enterpriseGlobalId),
      );
    }
  });
});

/** Two enterprises of one name, bound through the order service as channels do. */
const twin = uniqueCode('Twin Works ');
async function bindTwins(): Promise<void> {
  for (let i = 0; i < 2; i += 1)
    okData(
      await world.order('POST', '/enterprise/user/bind', {
        channelCode: world.channel,
        channelCustomerId: uniqueCode('cc'),
        customerName: twin,
        enterpriseName: twin,
      }),
    );
}

describe('filters take names', () => {
  beforeAll(bindTwins);

  it("the Usage and Audit filters take an enterprise's code or name as well as its id", async () => {
    const shown = (
      await h.app.inject({
        method: 'GET',
        url: `/console/operator/audit?enterprise=${encodeURIComponent(world.enterpriseCode)}`,
        headers: { cookie: op.cookie },
      })
    ).body;
    expect(shown).toContain('data-action="order.accepted"');
    const usage = await op.get(
      `/console/operator/usage?enterprise=${encodeURIComponent(world.enterpriseCode)}`,
    );
    expect(usage.statusCode, usage.body.slice(0, 500)).toBe(200);
    expect(usage.body).not.toContain('no enterprise');
    const unknown = await op.get('/console/operator/usage?enterprise=no-such-enterprise-name');
    expect(unknown.body).toContain('no enterprise no-such-enterprise-name');
    // A name two enterprises share is not enough: the filter asks for its code instead.
    const shared = await op.get(
      `/console/operator/usage?enterprise=${encodeURIComponent(twin.toLowerCase())}`,
    );
    expect(shared.body).toContain(`more than one enterprise is named ${twin.toLowerCase()}`);
  });

  it('the admin API takes the same names, with the same refusals', async () => {
    const byName = await h.app.inject({
      method: 'GET',
      url: `/admin/audit?enterprise=${encodeURIComponent(world.enterpriseCode)}&limit=50`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(byName.statusCode).toBe(200);
    const rows = (byName.json() as { items?: Array<{ enterpriseId: string | null }> }).items ?? byName.json();
    expect(Array.isArray(rows) && rows.length > 0).toBe(true);
    for (const row of rows as Array<{ enterpriseId: string | null }>)
      expect(row.enterpriseId).toBe(world.enterpriseGlobalId);
    const shared = await h.app.inject({
      method: 'GET',
      url: `/admin/usage?enterprise=${encodeURIComponent(twin)}`,
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(shared.statusCode).toBe(400);
    expect(shared.body).toContain('enterprise');
  });
});
