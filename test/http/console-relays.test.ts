import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enterpriseClient, operatorClient, type ConsoleClient } from '../support/console-client.js';
import { startHarness, type Harness } from '../support/harness.js';
import { Browser, signedIn } from '../support/operator-console.js';
import { lastWholeHour, newRelay, relayReport, relayRequest, relayReturn } from '../support/relay-files.js';
import { lockWith, runtimeWorld, type RuntimeWorld } from './runtime-helpers.js';

// The console's Relays pages (issue 42): the operator answers any enterprise's relay, the
// administrator his own enterprise's only; reports and returns imported through the same services
// as `keyward relay import-report` and `import-return`, each refusal named, changing nothing.

let h: Harness;
let world: RuntimeWorld;
let other: RuntimeWorld;
let admin: ConsoleClient;
let operator: ConsoleClient;

beforeAll(async () => {
  h = await startHarness();
  [world, other] = [await runtimeWorld(h), await runtimeWorld(h)];
  admin = await enterpriseClient(h, world.admin.account, world.admin.password);
  operator = await operatorClient(h);
});
afterAll(async () => h.close());

const grantTextOf = (body: string) =>
  /<textarea id="grant-text"[^>]*>([^<]+)<\/textarea>/.exec(body)?.[1]?.trim();

async function grantsOf(relayId: string): Promise<number> {
  const rows = await h.database.db
    .selectFrom('relay_grants')
    .select('id')
    .where('relay_id', '=', relayId)
    .execute();
  return rows.length;
}

/** A relay granted `seats` of a fresh lock of `w` through `client`'s page. */
async function granted(client: ConsoleClient, area: string, w: RuntimeWorld, seats = 4) {
  const relay = await newRelay();
  const license = await lockWith(w, { limitConcurrent: 5 });
  const page = await client.post(`/console/${area}/relays/grant`, {
    request: await relayRequest(relay, [{ ...license, seats }]),
  });
  expect(page.statusCode, page.body.slice(0, 400)).toBe(200);
  const token = grantTextOf(page.body) ?? '';
  const grantId = String(decodeJwt(token).jti);
  return { relay, license, grantId, page };
}

const rowOf = (body: string, grantId: string) =>
  new RegExp(`<tr[^>]*data-grant="${grantId}"[^>]*>(.*?)</tr>`, 's').exec(body)?.[1] ?? '';

describe('the console’s Relays pages', () => {
  it('lets the operator answer a request with the grant to carry, once, and lists it', async () => {
    const { relay, license, grantId, page } = await granted(operator, 'operator', other, 3);
    expect(page.body).toContain(`download="${relay.relayId}-grant.jwt"`);
    const file = /href="data:application\/jwt;base64,([^"]+)"/.exec(page.body)?.[1] ?? '';
    expect(Buffer.from(file, 'base64').toString('utf8').trim()).toBe(grantTextOf(page.body));
    expect(page.body).toContain(`${license.assetNum}/${license.crmProductId} × 3`);
    const list = await operator.get('/console/operator/relays');
    expect(rowOf(list.body, grantId)).toContain('running');
    expect(list.body).toContain(`/console/operator/usage?app=${relay.relayId}`);

    // The same request again: the same grant, said to be so, nothing more held.
    const request = await relayRequest(relay, [{ ...license, seats: 3 }]);
    const first = await operator.post('/console/operator/relays/grant', { request });
    const again = await operator.post('/console/operator/relays/grant', { request });
    expect(again.statusCode).toBe(200);
    expect(grantTextOf(again.body)).toBe(grantTextOf(first.body));
    expect(again.body).toContain('This request was answered before');
  });

  it('holds the administrator to his enterprise: another’s lock is refused as none, naming the field', async () => {
    const mine = await granted(admin, 'enterprise', world);
    const theirs = await granted(operator, 'operator', other);

    const relay = await newRelay();
    const lock = await lockWith(other, { limitConcurrent: 5 });
    const refused = await admin.post('/console/enterprise/relays/grant', {
      request: await relayRequest(relay, [{ ...lock, seats: 1 }]),
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('asks.licenses[0].assetNum: no lock has this number');
    expect(refused.body).toContain('id="field-request-error"');
    expect(grantTextOf(refused.body)).toBeUndefined();
    expect(await grantsOf(relay.relayId)).toBe(0);

    const list = await admin.get('/console/enterprise/relays');
    expect(list.body).toContain(`data-grant="${mine.grantId}"`);
    expect(list.body).not.toContain(`data-grant="${theirs.grantId}"`);
    expect(list.body).not.toContain(theirs.relay.relayId);
    // The administrator's relay links to no operator page.
    expect(list.body).not.toContain('/console/operator/');

    // Nor can he import the other enterprise's relay's report or return.
    const report = await admin.post('/console/enterprise/relays/report', {
      report: await relayReport(theirs.relay, theirs.grantId, theirs.license),
    });
    expect(report.statusCode).toBe(404);
    expect(report.body).toContain(`sub: relay ${theirs.relay.relayId} was never granted seats here`);
    const back = await admin.post('/console/enterprise/relays/return', {
      return: await relayReturn(theirs.relay, theirs.grantId),
    });
    expect(back.statusCode).toBe(404);
    expect(back.body).toContain(`grant: ${theirs.grantId} is not a grant of relay`);
    const seen = await operator.get('/console/operator/relays');
    expect(rowOf(seen.body, theirs.grantId)).toContain('running');
  });

  it('imports a report once, shows its figures, and the relay’s usage on both usage pages', async () => {
    const { relay, license, grantId } = await granted(admin, 'enterprise', world);
    const text = await relayReport(relay, grantId, license);
    const imported = await admin.post('/console/enterprise/relays/report', { report: text });
    expect(imported.statusCode, imported.body.slice(0, 400)).toBe(200);
    expect(imported.body).toContain(
      `of relay ${relay.relayId} imported: 1 hours, peak 3 seats, 2 seat-hours`,
    );
    const row = rowOf(imported.body, grantId);
    expect(row).toMatch(/class="peak"[^>]*>3</);
    expect(row).toMatch(/class="seat-hours"[^>]*>2</);
    expect(row).toMatch(/class="refused"[^>]*>3</);

    const replay = await operator.post('/console/operator/relays/report', { report: `${text}\n` });
    expect(replay.statusCode).toBe(409);
    expect(replay.body).toContain('was imported already');
    expect(replay.body).toContain('id="field-report-error"');

    const day = new Date(lastWholeHour()).toISOString().slice(0, 10);
    const range = `bucket=hour&from=${day}&to=${day}`;
    const usage = await operator.get(`/console/operator/usage?${range}`);
    expect(usage.statusCode).toBe(200);
    expect(usage.body).toContain(`data-relay="${relay.relayId}"`);
    expect(usage.body).toContain(
      `href="/console/operator/usage?app=${relay.relayId}&amp;${range.replaceAll('&', '&amp;')}"`,
    );
    const one = await operator.get(`/console/operator/usage?app=${relay.relayId}&${range}`);
    expect(one.statusCode).toBe(200);
    expect([...one.body.matchAll(/<tr data-relay="([^"]+)"/g)].map((m) => m[1])).toEqual([relay.relayId]);

    const own = await admin.get(`/console/enterprise/usage?${range}`);
    const line = new RegExp(`<tr data-relay="${relay.relayId}">(.*?)</tr>`, 's').exec(own.body)?.[1] ?? '';
    expect(line).toMatch(/class="peak"[^>]*>3</);
    expect(line).toMatch(/class="seat-hours"[^>]*>2</);
    // Another enterprise's page has none of this relay.
    const otherAdmin = await enterpriseClient(h, other.admin.account, other.admin.password);
    expect((await otherAdmin.get(`/console/enterprise/usage?${range}`)).body).not.toContain(relay.relayId);
  });

  it('shows the shares of usage limits a grant holds, and their use once a report says it', async () => {
    const relay = await newRelay();
    const license = await lockWith(world, {
      limitConcurrent: 5,
      limitAmount: 100,
      limitTimeDuration: 36_000,
    });
    const page = await admin.post('/console/enterprise/relays/grant', {
      request: await relayRequest(relay, [{ ...license, seats: 2, timeSeconds: 7200, amount: 30 }]),
    });
    expect(page.statusCode, page.body.slice(0, 400)).toBe(200);
    expect(page.body).toContain(
      `${license.assetNum}/${license.crmProductId} × 2 (2 h of its time, 30 of its amount)`,
    );
    const grantId = String(decodeJwt(grantTextOf(page.body) ?? '').jti);
    expect(rowOf((await admin.get('/console/enterprise/relays')).body, grantId)).toContain(
      '<span class="relay-share">time – / 2 h · amount – / 30</span>',
    );
    const report = await relayReport(
      relay,
      grantId,
      license,
      [{}],
      [{ ...license, timeSeconds: 1800, amount: 12 }],
    );
    expect((await admin.post('/console/enterprise/relays/report', { report })).statusCode).toBe(200);
    const row = rowOf((await admin.get('/console/enterprise/relays')).body, grantId);
    expect(row).toContain('time 0.5 / 2 h · amount 12 / 30');
    const zh = await admin.get('/console/enterprise/relays', { 'accept-language': 'zh-CN' });
    expect(rowOf(zh.body, grantId)).toContain('时长 0.5 / 2 小时 · 用量 12 / 30');
    // The return says the relay's last use: the rest of each share goes back, said so.
    const back = await admin.post('/console/enterprise/relays/return', {
      return: await relayReturn(relay, grantId, [{ ...license, timeSeconds: 1800, amount: 12 }]),
    });
    expect(back.body).toContain(
      `Given back to ${license.assetNum}/${license.crmProductId}: 1.5 h of its time, 18 of its amount.`,
    );
  });

  it('imports a return: the grant is returned, its seats free; again, nothing changes', async () => {
    const { relay, grantId } = await granted(operator, 'operator', world);
    const text = await relayReturn(relay, grantId);
    const back = await operator.post('/console/operator/relays/return', { return: text });
    expect(back.statusCode, back.body.slice(0, 400)).toBe(200);
    expect(back.body).toContain(`Relay ${relay.relayId} returned grant ${grantId}`);
    expect(rowOf(back.body, grantId)).toContain('returned');
    const again = await admin.post('/console/enterprise/relays/return', { return: text });
    expect(again.statusCode).toBe(200);
    expect(again.body).toContain('was returned already');
  });

  it('names a tampered file and one too long for the page, keeping a short one in its box', async () => {
    const { relay, grantId } = await granted(operator, 'operator', world);
    const [head, body, signature] = (await relayReturn(relay, grantId)).split('.');
    const claims = JSON.parse(Buffer.from(body ?? '', 'base64url').toString('utf8')) as { jti: string };
    const changed = Buffer.from(JSON.stringify({ ...claims, jti: randomUUID() })).toString('base64url');
    const tampered = `${head}.${changed}.${signature}`;
    const refused = await operator.post('/console/operator/relays/return', { return: tampered });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toMatch(/Refused: return: [^<]*signature/);
    expect(refused.body).toContain(tampered);
    expect(rowOf(refused.body, grantId)).toContain('running');

    const huge = await operator.post('/console/operator/relays/report', { report: 'a'.repeat(300_000) });
    expect(huge.statusCode).toBe(413);
    expect(huge.body).toContain('report: longer than 256 KiB');
    expect(huge.body).not.toContain('a'.repeat(1000));
  });

  it('shows a support operator the grants but no form, and refuses his posts', async () => {
    const { browser } = await signedIn(h, 'support');
    const support: Browser = browser;
    const page = await support.get('/console/operator/relays');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('class="relay-grants"');
    expect(page.body).not.toContain('action="/console/operator/relays/');
    const relay = await newRelay();
    const lock = await lockWith(world, { limitConcurrent: 5 });
    const post = await support.post('/console/operator/relays/grant', {
      request: await relayRequest(relay, [{ ...lock, seats: 1 }]),
    });
    expect(post.statusCode).toBe(404);
    expect(await grantsOf(relay.relayId)).toBe(0);
    const { browser: auditor } = await signedIn(h, 'auditor');
    expect((await auditor.get('/console/operator/relays')).statusCode).toBe(404);
  });

  it('grants on the terms typed in, shows the grant’s typed code, and names a term it refuses', async () => {
    const relay = await newRelay();
    const license = await lockWith(world, { limitConcurrent: 5 });
    const request = await relayRequest(relay, [{ ...license, seats: 2 }]);
    const refused = await admin.post('/console/enterprise/relays/grant', {
      request,
      machines: 'lab-workstation-01\nlab-workstation-01',
      overage: '1',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).toContain('id="machines-error"');
    expect(refused.body).toContain('machines[1]: lists lab-workstation-01 twice');
    // The terms typed are shown again to be corrected.
    expect(refused.body).toMatch(
      /<textarea id="field-machines"[^>]*>lab-workstation-01\s+lab-workstation-01/,
    );
    // A list past the field's size would arrive cut: refused whole, next to its field.
    const long = Array.from({ length: 300 }, (_, i) => `lab-workstation-${String(i).padStart(240, '0')}`);
    const tooLong = await admin.post('/console/enterprise/relays/grant', {
      request,
      machines: long.join('\n'),
    });
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain('id="machines-error"');
    expect(tooLong.body).toContain('machines: longer than 64 KiB');
    const badOverage = await admin.post('/console/enterprise/relays/grant', { request, overage: 'two' });
    expect(badOverage.statusCode).toBe(400);
    expect(badOverage.body).toContain('id="overage-error"');
    expect(await grantsOf(relay.relayId)).toBe(0);

    const page = await admin.post('/console/enterprise/relays/grant', {
      request,
      machines: ' lab-workstation-01 \r\n\r\nlab-workstation-02\n',
      overage: '1',
    });
    expect(page.statusCode, page.body.slice(0, 400)).toBe(200);
    const claims = decodeJwt(grantTextOf(page.body) ?? '');
    expect(claims.machines).toEqual(['lab-workstation-01', 'lab-workstation-02']);
    expect(claims.overage).toEqual({ policy: 'allow', seats: 1 });
    expect(page.body).toContain('Machines: 2 listed. Overage: up to 1 per product, reported.');
    const code = /<textarea id="grant-code"[^>]*>([^<]+)<\/textarea>/.exec(page.body)?.[1]?.trim() ?? '';
    expect(code).toMatch(/^[0-9A-Z]{6}(-[0-9A-Z]{1,6})+$/);
    const list = await admin.get('/console/enterprise/relays');
    expect(rowOf(list.body, String(claims.jti))).toContain('2 listed, +1 reported');
  });
});
