import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_REQUEST } from '../../src/domain/audit/audit-actions.js';
import { FULL_PASS_MS, LicensesService } from '../../src/domain/licenses/licenses.service.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { appIdOf } from '../http/audit-helpers.js';
import { openTestDatabase, onPostgres } from '../support/database.js';
import { createTestApp } from '../support/fixtures.js';
import { startHarness, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, productSpec, type AssetWorld } from '../support/order-fixtures.js';

// license.expiring at LICENSE_EXPIRING_NOTICE_DAYS before a license's end, once per license and
// threshold, whichever instance runs the housekeeping; license.expired once its end passed. Each
// license here ends in a year of its own near 2090, and the notices are sent by services whose
// clock the test sets, so no other test's licenses (nor the real clock's) come into it.

const DAY = 86_400_000;
const NOTICES = { expiringDays: 30, noticeDays: [30, 7, 1] };

let h: Harness;
let second: DatabaseHandle | undefined;
let world: AssetWorld;
let mine: string;
let mate: string;
let stranger: string;

beforeAll(async () => {
  h = await startHarness();
  world = await assetWorld(h);
  mine = await endpointFor(world.app.appKey);
  mate = await endpointFor((await createTestApp(h, { channels: [world.channel] })).appKey);
  stranger = await endpointFor((await createTestApp(h)).appKey);
  // A second instance: its own connections to the same PostgreSQL database.
  if (onPostgres()) second = await openTestDatabase();
});
afterAll(async () => {
  await second?.close();
  await h.close();
});

async function endpointFor(appKey: string): Promise<string> {
  const appId = await appIdOf(h, appKey);
  const created = await h.app.services.webhookEndpoints.create(
    appId,
    { url: 'https://receiver.example/hook' },
    { appId, operator: null, ...NO_REQUEST },
  );
  return created.id;
}

/** A moment of a year of its own near 2090, at which a license of this test ends. */
function farEnd(): number {
  return Date.UTC(2090 + randomInt(0, 50), 0, 1) + randomInt(0, 300) * DAY;
}

/** The housekeeping's notices as an instance on `db` would send them, its clock at `at`. */
function instance(at: number, db = h.database): LicensesService {
  return new LicensesService(db.db, NOTICES, () => at);
}

/** A fresh license of the world's customer ending at `endsAt`: its asset number. */
function licenseEnding(endsAt: number): Promise<string> {
  return buyAsset(world, [productSpec({ limitEndDate: endsAt, limitConcurrent: 4 })]);
}

/** The license events of one asset an endpoint was given, oldest first. */
async function eventsOf(endpointId: string, assetNum: string) {
  return h.database.db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_events as e', 'e.id', 'd.event_id')
    .select(['e.type', 'e.data', 'e.channels'])
    .where('d.endpoint_id', '=', endpointId)
    .where('e.type', 'like', 'license.%')
    .where((eb) => eb(eb.ref('e.data', '->>').key('assetNum' as never), '=', assetNum))
    .orderBy('d.id')
    .execute();
}

async function auditOf(assetNum: string) {
  return h.database.db
    .selectFrom('audit_log')
    .select(['action', 'detail', 'app_id'])
    .where('subject', '=', assetNum)
    .where('action', 'like', 'license.%')
    .orderBy('id')
    .execute();
}

describe('license.expiring', () => {
  it('is sent once for the 30-day threshold to a license ending in 10 days, not again on the next run', async () => {
    const end = farEnd();
    const num = await licenseEnding(end);
    const now = end - 10 * DAY;
    expect(await instance(now).sendNotices()).toBeGreaterThanOrEqual(1);
    await instance(now + 60_000).sendNotices();

    const events = await eventsOf(mine, num);
    expect(events.map((e) => e.type)).toEqual(['license.expiring']);
    expect(events[0]?.channels).toEqual([world.channel]);
    expect(events[0]?.data).toMatchObject({
      assetNum: num,
      daysBefore: 30,
      endsAt: new Date(end).toISOString(),
      limitConcurrent: 4,
      customerId: world.customerId,
      channelCode: world.channel,
      appKey: world.app.appKey,
    });
    expect(events[0]?.data).not.toHaveProperty('appId');
    // Its audit row: by no app and no operator, the ordering app's id kept in its detail.
    const audited = await auditOf(num);
    expect(audited.map((r) => r.action)).toEqual(['license.expiring']);
    expect(audited[0]?.app_id).toBeNull();
    expect(audited[0]?.detail).toMatchObject({ daysBefore: 30, appId: await appIdOf(h, world.app.appKey) });
  });

  it('reaches the apps of the license’s channel, not those of other channels', async () => {
    const end = farEnd();
    const num = await licenseEnding(end);
    await instance(end - 10 * DAY).sendNotices();
    expect(await eventsOf(mate, num)).toHaveLength(1);
    expect(await eventsOf(stranger, num)).toEqual([]);
  });

  it('reaches the app that ordered the license even after its channels changed', async () => {
    const seller = await assetWorld(h);
    const sellers = await endpointFor(seller.app.appKey);
    const end = farEnd();
    const num = await buyAsset(seller, [productSpec({ limitEndDate: end })]);
    await h.database.db
      .updateTable('apps')
      .set({ channels: [`moved-${seller.channel}`] })
      .where('app_key', '=', seller.app.appKey)
      .execute();
    await instance(end - 10 * DAY).sendNotices();
    expect((await eventsOf(sellers, num)).map((e) => e.type)).toEqual(['license.expiring']);
  });

  it('is sent once when two instances run the housekeeping at the same moment', async () => {
    const end = farEnd();
    const num = await licenseEnding(end);
    const now = end - 10 * DAY;
    const sent = await Promise.all([
      instance(now).sendNotices(),
      instance(now, second ?? h.database).sendNotices(),
      instance(now).sendNotices(),
      instance(now, second ?? h.database).sendNotices(),
    ]);
    expect(sent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect((await eventsOf(mine, num)).map((e) => e.type)).toEqual(['license.expiring']);
    expect((await auditOf(num)).map((r) => r.action)).toEqual(['license.expiring']);
  });

  it('is sent again at each smaller threshold crossed, once each, and again for a renewed end', async () => {
    const end = farEnd();
    const num = await licenseEnding(end);
    for (const daysLeft of [20, 10, 6.5, 5, 0.5, 0.25]) await instance(end - daysLeft * DAY).sendNotices();
    const daysBefore = async () =>
      (await eventsOf(mine, num)).map((e) => (e.data as { daysBefore?: number }).daysBefore);
    expect(await daysBefore()).toEqual([30, 7, 1]);
    // Renewed (its end moved on, as a renewal order moves it): due for notices again at the new end.
    const renewed = end + 365 * DAY;
    await h.database.db
      .updateTable('product_instances')
      .set({ limit_end_time: renewed })
      .where(
        'asset_id',
        'in',
        h.database.db.selectFrom('assets').select('assets.id').where('asset_num', '=', num),
      )
      .execute();
    await instance(renewed - 12 * DAY).sendNotices();
    expect(await daysBefore()).toEqual([30, 7, 1, 30]);
  });
});

describe('one instance’s passes, a minute apart', () => {
  it('tell a license crossing a threshold at the next minute, and one ordered inside it within the hour', async () => {
    const end = farEnd();
    const crossing = await licenseEnding(end);
    let clock = end - 30 * DAY - 90_000;
    const service = new LicensesService(h.database.db, NOTICES, () => clock);
    await service.sendNotices(); // the first pass reads everything near its end: nothing due yet
    expect(await eventsOf(mine, crossing)).toEqual([]);
    clock += 60_000;
    await service.sendNotices();
    expect(await eventsOf(mine, crossing)).toEqual([]);
    clock += 60_000; // 30 days before the end now passed: the narrow pass finds it
    await service.sendNotices();
    expect((await eventsOf(mine, crossing)).map((e) => e.type)).toEqual(['license.expiring']);

    // Ordered with 10 days left: between two thresholds, which a narrow pass does not read.
    const late = await licenseEnding(clock + 10 * DAY);
    clock += 60_000;
    await service.sendNotices();
    expect(await eventsOf(mine, late)).toEqual([]);
    clock += FULL_PASS_MS;
    await service.sendNotices();
    expect((await eventsOf(mine, late)).map((e) => (e.data as { daysBefore: number }).daysBefore)).toEqual([
      30,
    ]);
  });
});

describe('license.expired', () => {
  it('is sent once when a license’s end has passed, and never for one that ended long before', async () => {
    const end = farEnd();
    const num = await licenseEnding(end);
    await instance(end + 3_600_000).sendNotices();
    await instance(end + 7_200_000).sendNotices();
    const events = await eventsOf(mine, num);
    expect(events.map((e) => e.type)).toEqual(['license.expired']);
    expect(events[0]?.data).toMatchObject({ assetNum: num, endsAt: new Date(end).toISOString() });
    expect(events[0]?.data).not.toHaveProperty('daysBefore');

    const old = farEnd();
    const oldNum = await licenseEnding(old);
    await instance(old + 30 * DAY).sendNotices();
    expect(await eventsOf(mine, oldNum)).toEqual([]);
  });
});
