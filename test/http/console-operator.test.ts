import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONSOLE_CLIENT_KEY } from '../../src/domain/console/console-client.js';
import { csvCell, csvLine } from '../../src/http/console/operator/csv.js';
import { operatorLinks } from '../../src/http/console/operator/links.js';
import { assetWorld, type AssetWorld } from '../support/order-fixtures.js';
import { enterpriseClient, operatorClient } from '../support/console-client.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';

let h: Harness;
let enterprise: AssetWorld;

const PAGE_LIMIT = 150 * 1024;

const operator = () => operatorClient(h);

async function appsByName(name: string) {
  return (await h.app.services.apps.list()).filter((a) => a.name === name);
}

/** A dashboard card's number. */
function card(body: string, label: string): number {
  const at = body.indexOf(`data-card="${label}"`);
  expect(at).toBeGreaterThan(-1);
  const value = /<span class="value">([\d,]+)<\/span>/.exec(body.slice(at))?.[1] ?? '';
  return Number(value.replace(/,/g, ''));
}

beforeAll(async () => {
  h = await startHarness();
  enterprise = await assetWorld(h);
});
afterAll(async () => h?.close());

describe('console operator pages (inject)', () => {
  it('refuses a post without the CSRF token with 403 and changes nothing', async () => {
    const op = await operator();
    const name = uniqueCode('no-csrf');
    const refused = await op.post(
      '/console/operator/apps',
      { name, scope_auth_order: '1', status: 'active' },
      { csrf: false },
    );
    expect(refused.statusCode).toBe(403);
    const wrong = await op.post('/console/operator/apps', {
      _csrf: 'x'.repeat(40),
      name,
      scope_auth_order: '1',
    });
    expect(wrong.statusCode).toBe(403);
    expect(await appsByName(name)).toEqual([]);
    const limit = await op.post(
      `/console/operator/enterprises/${enterprise.enterpriseGlobalId}/member-limit`,
      { memberLimit: '7' },
      { csrf: false },
    );
    expect(limit.statusCode).toBe(403);
    const shown = await h.app.services.enterprises.directoryEntry(enterprise.enterpriseGlobalId);
    expect(shown?.memberLimit).toBeNull();
  });

  it('answers an enterprise administrator on every operator page with 404', async () => {
    const admin = await enterpriseClient(h, enterprise.admin.account, enterprise.admin.password);
    for (const url of [
      '/console/operator',
      '/console/operator/apps',
      '/console/operator/enterprises',
      `/console/operator/enterprises/${enterprise.enterpriseGlobalId}`,
      '/console/operator/orders',
      '/console/operator/leases',
      '/console/operator/audit',
      '/console/operator/audit.csv',
    ]) {
      const response = await admin.get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).toContain('Not found');
      expect(response.body).not.toContain('<table');
    }
    const post = await admin.post('/console/operator/apps', {
      _csrf: admin.csrf,
      name: 'by an enterprise',
      scope_auth_order: '1',
    });
    expect(post.statusCode).toBe(404);
    expect(await appsByName('by an enterprise')).toEqual([]);
  });

  it('counts a new app on the dashboard, audited as the console', async () => {
    const op = await operator();
    const before = await op.get('/console/operator');
    expect(before.statusCode).toBe(200);
    const name = uniqueCode('dash');
    const created = await op.post('/console/operator/apps', {
      _csrf: op.csrf,
      name,
      scope_auth_me: '1',
      channels: 'ch-a, ch-b',
      status: 'pending',
    });
    expect(created.statusCode).toBe(200);
    const [app] = await appsByName(name);
    expect(app).toMatchObject({ status: 'pending', scopes: ['auth_me'], channels: ['ch-a', 'ch-b'] });
    const after = await op.get('/console/operator');
    // At least one more: on a shared database another test file may create apps meanwhile.
    expect(card(after.body, 'Apps')).toBeGreaterThanOrEqual(card(before.body, 'Apps') + 1);
    const [row] = await h.app.services.audit.list({ subject: app?.appKey ?? '', limit: 5 });
    expect(row).toMatchObject({ action: 'app.created', operator: 'admin-console' });
  });

  it('shows a service error next to its field and keeps what was typed', async () => {
    const op = await operator();
    const name = uniqueCode('bad-channel');
    const refused = await op.post('/console/operator/apps', {
      _csrf: op.csrf,
      name,
      scope_auth_order: '1',
      channels: 'not a/valid code',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('id="field-channels-error"');
    expect(refused.body).toContain('AppInputError');
    expect(refused.body).toContain(`value="${name}"`);
    expect(await appsByName(name)).toEqual([]);
  });

  it('sets a member limit through the admin service and shows it', async () => {
    const op = await operator();
    const url = `/console/operator/enterprises/${enterprise.enterpriseGlobalId}`;
    const bad = await op.post(`${url}/member-limit`, { _csrf: op.csrf, memberLimit: '0' });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('id="field-memberLimit-error"');
    const set = await op.post(`${url}/member-limit`, { _csrf: op.csrf, memberLimit: '40' });
    expect(set.statusCode).toBe(303);
    const page = await op.get(String(set.headers.location));
    expect(page.body).toMatch(/data-member-limit="?[^>]*>40</);
    const [row] = await h.app.services.audit.list({
      action: 'enterprise.member_limit_set',
      enterprise: enterprise.enterpriseGlobalId,
      limit: 1,
    });
    expect(row).toMatchObject({ operator: 'admin-console', detail: { memberLimit: 40 } });
    await op.post(`${url}/member-limit`, { _csrf: op.csrf, memberLimit: '' });
    expect(
      (await h.app.services.enterprises.directoryEntry(enterprise.enterpriseGlobalId))?.memberLimit,
    ).toBeNull();
    expect((await op.get('/console/operator/enterprises/no-such-enterprise')).statusCode).toBe(404);
  });

  it('finds an enterprise by channel customer id, code and part of its name', async () => {
    const op = await operator();
    for (const q of [
      enterprise.channelCustomerId,
      enterprise.enterpriseCode,
      enterprise.enterpriseGlobalId,
    ]) {
      const page = await op.get(`/console/operator/enterprises?q=${encodeURIComponent(q)}`);
      expect(page.body, q).toContain(enterprise.enterpriseGlobalId);
    }
    const none = await op.get(`/console/operator/enterprises?q=${uniqueCode('nobody')}`);
    expect(none.body).toContain('No enterprise matches');
  });

  it('exports the audit log as CSV with the page filters, quoted and defused', async () => {
    const op = await operator();
    const name = `=HYPERLINK("x"),${uniqueCode('csv')}`;
    const created = await op.post('/console/operator/apps', {
      _csrf: op.csrf,
      name,
      scope_auth_order: '1',
    });
    expect(created.statusCode).toBe(200);
    const [app] = await appsByName(name);
    const csv = await op.get(`/console/operator/audit.csv?action=app.created&subject=${app?.appKey}`);
    expect(csv.statusCode).toBe(200);
    expect(csv.headers['content-type']).toContain('text/csv');
    expect(String(csv.headers['content-disposition'])).toMatch(
      /^attachment; filename="keyward-audit-.*\.csv"$/,
    );
    const lines = csv.body.split('\r\n').filter((l) => l !== '');
    expect(lines[0]).toBe(
      'id,created_at,action,subject,enterprise,app_id,operator,operator_id,request_id,client_request_id,detail',
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,app.created,${app?.appKey},,,admin-console,`);
    // The detail holds the name: JSON in one quoted cell, its quotes doubled.
    expect(lines[1]).toContain('"{""name"":""=HYPERLINK(\\""x\\""),');
  });

  it("names an app's audit rows by the app's key and name, not its id", async () => {
    const op = await operator();
    const appKey = enterprise.app.appKey;
    const [own] = (await h.app.services.apps.list()).filter((a) => a.appKey === appKey);
    const [row] = await h.app.services.audit.list({ app: appKey, limit: 1 });
    expect(row?.operator).toBeNull();
    const page = await op.get(`/console/operator/audit?app=${appKey}`);
    expect(page.statusCode).toBe(200);
    const actor = /<td data-kind="text" class="actor">([\s\S]*?)<\/td>/.exec(page.body)?.[1] ?? '';
    expect(actor).toContain(`<span data-app-key="${appKey}">`);
    expect(actor).toContain(
      `<a href="${operatorLinks.app(appKey).replace(/&/g, '&amp;')}"><code class="ident`,
    );
    expect(actor).toContain(String(own?.name));
    expect(actor).not.toContain(String(row?.appId));
  });

  it('quotes CSV cells and defuses formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    expect(csvCell('=1+1')).toBe("'=1+1");
    expect(csvCell('+1')).toBe("'+1");
    expect(csvCell('-1')).toBe("'-1");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('=A1,"x"')).toBe(`"'=A1,""x"""`);
    expect(csvCell(null)).toBe('');
    expect(csvCell(42)).toBe('42');
    expect(csvLine(['a', 'b,c'])).toBe('a,"b,c"\r\n');
  });

  it('keeps every main page under 150 KB', async () => {
    const op = await operator();
    for (const url of [
      '/console/operator',
      '/console/operator/apps',
      '/console/operator/enterprises',
      `/console/operator/enterprises/${enterprise.enterpriseGlobalId}`,
      '/console/operator/orders',
      '/console/operator/leases',
      '/console/operator/audit',
    ]) {
      const page = await op.get(url);
      expect(page.statusCode, url).toBe(200);
      expect(Buffer.byteLength(page.body), url).toBeLessThan(PAGE_LIMIT);
    }
  });

  it("sets an app's longest offline lease from its row, with the CSRF token, audited as the console", async () => {
    const op = await operator();
    const created = await h.app.services.apps.create({
      name: uniqueCode('offline'),
      scopes: ['auth_runtime'],
      channels: [],
      pending: false,
    });
    const { appKey } = created;
    const action = `/console/operator/apps/${appKey}/offline-lease-days`;
    const row = async () => {
      const page = await op.get(`/console/operator/apps?${new URLSearchParams({ q: appKey })}`);
      const at = page.body.indexOf(`<tr data-app="${appKey}"`);
      expect(at).toBeGreaterThan(-1);
      return page.body.slice(at, page.body.indexOf('</tr>', at));
    };
    const stored = async () =>
      (await h.app.services.apps.list()).find((a) => a.appKey === appKey)?.offlineLeaseMaxDays;

    const before = await row();
    expect(before).toContain('data-offline-days="0"');
    expect(before).toContain(`action="${action}"`);
    expect(before).toMatch(/name="days"[^>]*value="0"|value="0"[^>]*name="days"/);

    expect((await op.post(action, { days: '14' }, { csrf: false })).statusCode).toBe(403);
    expect((await op.post(action, { _csrf: 'x'.repeat(40), days: '14' })).statusCode).toBe(403);
    for (const days of ['366', '-1', '', 'ten', '1.5']) {
      const refused = await op.post(action, { _csrf: op.csrf, days });
      expect(refused.statusCode, days).toBe(400);
      expect(refused.body).toContain('days must be a whole number from 0 to 365');
    }
    expect(await stored()).toBe(0);

    const set = await op.post(action, { _csrf: op.csrf, days: '14' });
    expect(set.statusCode).toBe(303);
    const page = await op.get(String(set.headers.location));
    expect(page.body).toContain(`App ${appKey}: its longest offline lease is saved.`);
    expect(await row()).toContain('data-offline-days="14"');
    expect(await stored()).toBe(14);
    const [entry] = await h.app.services.audit.list({
      action: 'app.offline_lease_days_set',
      subject: appKey,
      limit: 1,
    });
    expect(entry).toMatchObject({ operator: 'admin-console', detail: { days: 14, previousDays: 0 } });

    expect(
      (await op.post('/console/operator/apps/kw_nobody/offline-lease-days', { days: '3' })).statusCode,
    ).toBe(404);
    // A disabled app shows its value, with no form to change it.
    await h.app.services.apps.disable(appKey);
    const disabled = await row();
    expect(disabled).toContain('data-offline-days="14"');
    expect(disabled).not.toContain(`action="${action}"`);
  });

  it('shows the console client apart, with no control, and refuses its changes by hand with 409', async () => {
    const op = await operator();
    const page = await op.get('/console/operator/apps');
    expect(page.statusCode).toBe(200);
    const at = page.body.indexOf(`data-console-client="${CONSOLE_CLIENT_KEY}"`);
    expect(at).toBeGreaterThan(-1);
    const section = page.body.slice(at, page.body.indexOf('</section>', at));
    expect(section).toContain('Console sign-in client');
    expect(section).toContain('disabling it would end console sign-in for every enterprise');
    expect(section).not.toContain('<form');
    // Only there: not among the channel apps, not even when searched for.
    expect(page.body.split(`<tr data-app="${CONSOLE_CLIENT_KEY}"`)).toHaveLength(2);
    const searched = await op.get(`/console/operator/apps?${new URLSearchParams({ q: CONSOLE_CLIENT_KEY })}`);
    const listing = searched.body.slice(0, searched.body.indexOf('data-console-client'));
    expect(listing).not.toContain(`data-app="${CONSOLE_CLIENT_KEY}"`);

    const before = (await h.app.services.apps.list()).find((a) => a.appKey === CONSOLE_CLIENT_KEY);
    const audited = (await h.app.services.audit.list({ subject: CONSOLE_CLIENT_KEY, limit: 100 })).length;
    const base = `/console/operator/apps/${CONSOLE_CLIENT_KEY}`;
    for (const [path, form] of [
      ['/disable', {}],
      ['/rotate', { revokeTokens: '1' }],
      ['/offline-lease-days', { days: '3' }],
    ] as const) {
      const refused = await op.post(`${base}${path}`, { _csrf: op.csrf, ...form });
      expect(refused.statusCode, path).toBe(409);
      expect(refused.body).toContain(
        "keyward-console is the console's own sign-in client: disabling or changing it ends console sign-in for every enterprise.",
      );
    }
    expect((await h.app.services.apps.list()).find((a) => a.appKey === CONSOLE_CLIENT_KEY)).toEqual(before);
    expect(await h.app.services.audit.list({ subject: CONSOLE_CLIENT_KEY, limit: 100 })).toHaveLength(
      audited,
    );
    await enterpriseClient(h, enterprise.admin.account, enterprise.admin.password);
  });

  it('does not count the console client among the apps on the dashboard', async () => {
    const op = await operator();
    const before = (await h.app.services.apps.list()).length;
    const shown = card((await op.get('/console/operator')).body, 'Apps');
    const after = (await h.app.services.apps.list()).length;
    // Apps are never deleted: on a shared database more may appear meanwhile, never fewer.
    expect(shown).toBeGreaterThanOrEqual(before - 1);
    expect(shown).toBeLessThanOrEqual(after - 1);
  });

  it('pages the apps newest first, 50 a page, and finds one by name or key', async () => {
    const op = await operator();
    const prefix = uniqueCode('pg');
    for (const n of [1, 2, 3]) {
      await h.app.services.apps.create({
        name: `${prefix} ${n}`,
        scopes: ['auth_me'],
        channels: [],
        pending: false,
      });
    }
    const found = await op.get(`/console/operator/apps?${new URLSearchParams({ q: prefix })}`);
    const names = [...found.body.matchAll(new RegExp(`${prefix} (\\d)`, 'g'))].map((m) => m[1]);
    expect(names).toEqual(['3', '2', '1']);
    expect(found.body).toContain('(3 in all)');
    const [third] = await appsByName(`${prefix} 3`);
    const byKey = await op.get(`/console/operator/apps?${new URLSearchParams({ q: third?.appKey ?? '' })}`);
    expect(byKey.body).toContain(`${prefix} 3`);
    expect(byKey.body).not.toContain(`${prefix} 2`);
    const wildcard = await op.get(`/console/operator/apps?${new URLSearchParams({ q: '%' })}`);
    expect(wildcard.body).not.toContain(prefix);

    const all = await op.get('/console/operator/apps');
    // The console's own client is shown in a section of its own, after the channel apps' page.
    const listing = all.body.slice(0, all.body.indexOf('data-console-client'));
    const rows = listing.match(/<tr data-app=/g) ?? [];
    expect(rows.length).toBeLessThanOrEqual(50);
    expect(rows.length).toBeGreaterThan(0);
  });
});
