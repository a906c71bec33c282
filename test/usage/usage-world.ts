import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { Db } from '../../src/db/client.js';
import { RuntimeRepository } from '../../src/domain/runtime/runtime.repository.js';
import type { Harness } from '../support/harness.js';
import { lockWith, runtimeWorld } from '../http/runtime-helpers.js';

const HOUR_MS = 3_600_000;

/** A product instance to hang random leases on, copied from a real one: cheap, and fresh per run. */
export interface UsageWorld {
  appId: string;
  assetId: string;
  template: number;
  enterpriseGlobalId: string;
  appKey: string;
}

export async function usageWorld(h: Harness): Promise<UsageWorld> {
  const world = await runtimeWorld(h);
  const lock = await lockWith(world, { limitConcurrent: 3 });
  const row = await sql<{ id: string; asset_id: string; app_id: string }>`
    select p.id, p.asset_id, ap.id as app_id
      from product_instances p join assets a on a.id = p.asset_id, apps ap
     where a.asset_num = ${lock.assetNum} and ap.app_key = ${world.app.appKey}
  `.execute(h.database.db);
  const found = row.rows[0];
  if (found === undefined) throw new Error('no product instance');
  return {
    appId: found.app_id,
    assetId: found.asset_id,
    template: Number(found.id),
    enterpriseGlobalId: world.enterpriseGlobalId,
    appKey: world.app.appKey,
  };
}

/** A new product instance like the template (same asset), with `seats` licensed. */
export async function freshProduct(db: Db, world: UsageWorld, seats: number | null): Promise<number> {
  const result = await sql<{ id: string }>`
    insert into product_instances (asset_id, license_order_id, customer_id, license_type, crm_product_id,
                                   product_name, limit_concurrent)
    select asset_id, license_order_id, customer_id, license_type,
           ${`U-${randomBytes(5).toString('hex')}`}, product_name, ${seats}
      from product_instances where id = ${world.template}
    returning id
  `.execute(db);
  return Number(result.rows[0]?.id);
}

export async function insertLease(
  db: Db,
  world: UsageWorld,
  productId: number,
  at: number,
  expiresAt: number,
  offline: boolean,
): Promise<string> {
  const id = `lease-${randomBytes(8).toString('hex')}`;
  await new RuntimeRepository(db).placeLease({
    id,
    appId: world.appId,
    productId,
    assetId: world.assetId,
    holderKind: 'lock',
    holderKey: `l:${world.assetId}`,
    memberId: null,
    lockAssetId: world.assetId,
    enterpriseId: null,
    pool: 'own',
    fingerprint: `fp-${id}`,
    offline,
    now: new Date(at),
    expiresAt: new Date(expiresAt),
  });
  return id;
}

export interface Cell {
  peak: number;
  ms: number;
}

/** The hourly seats of a product recounted from its raw lease rows, the rollups' definition written out plainly. */
export async function recount(db: Db, productId: number, now: number): Promise<Map<number, Cell>> {
  const rows = await sql<{
    created_at: Date;
    expires_at: Date;
    ended_at: Date | null;
    seat_held_until: Date | null;
  }>`
    select created_at, expires_at, ended_at, seat_held_until from runtime_leases where product_id = ${productId}
  `.execute(db);
  const intervals = rows.rows.map((r) => {
    const end =
      r.ended_at === null
        ? Math.min(r.expires_at.getTime(), now)
        : (r.seat_held_until?.getTime() ?? Math.min(r.ended_at.getTime(), r.expires_at.getTime()));
    return { s: r.created_at.getTime(), e: end };
  });
  const cells = new Map<number, Cell>();
  for (const { s, e } of intervals) {
    for (let h = Math.floor(s / HOUR_MS) * HOUR_MS; h < e; h += HOUR_MS) {
      const cell = cells.get(h) ?? { peak: 0, ms: 0 };
      cell.ms += Math.min(e, h + HOUR_MS) - Math.max(s, h);
      cells.set(h, cell);
    }
  }
  for (const [h, cell] of cells) {
    // The peak is reached at some interval's start: count who holds a seat at each.
    for (const { s } of intervals) {
      const t = Math.max(s, h);
      if (t >= h + HOUR_MS) continue;
      const holding = intervals.filter((i) => i.s <= t && t < i.e).length;
      cell.peak = Math.max(cell.peak, holding);
    }
  }
  for (const [h, cell] of cells) if (cell.ms === 0 && cell.peak === 0) cells.delete(h);
  return cells;
}

/** What the rollups hold for a product, hours with nothing left out. */
export async function rolled(db: Db, productId: number): Promise<Map<number, Cell>> {
  const rows = await sql<{ bucket: Date; peak_seats: number; seat_ms: string }>`
    select bucket, peak_seats, seat_ms from usage_hourly where product_id = ${productId}
  `.execute(db);
  const cells = new Map<number, Cell>();
  for (const r of rows.rows) {
    if (r.peak_seats === 0 && Number(r.seat_ms) === 0) continue;
    cells.set(r.bucket.getTime(), { peak: r.peak_seats, ms: Number(r.seat_ms) });
  }
  return cells;
}

/** The daily rollups of a product, checked against its hours. */
export async function dailyOf(db: Db, productId: number): Promise<Map<number, Cell>> {
  const rows = await sql<{ bucket: Date; peak_seats: number; seat_ms: string }>`
    select bucket, peak_seats, seat_ms from usage_daily where product_id = ${productId}
  `.execute(db);
  const cells = new Map<number, Cell>();
  for (const r of rows.rows) {
    if (r.peak_seats === 0 && Number(r.seat_ms) === 0) continue;
    cells.set(r.bucket.getTime(), { peak: r.peak_seats, ms: Number(r.seat_ms) });
  }
  return cells;
}

export function daysOf(hours: Map<number, Cell>): Map<number, Cell> {
  const days = new Map<number, Cell>();
  for (const [h, cell] of hours) {
    const d = Math.floor(h / 86_400_000) * 86_400_000;
    const day = days.get(d) ?? { peak: 0, ms: 0 };
    day.peak = Math.max(day.peak, cell.peak);
    day.ms += cell.ms;
    days.set(d, day);
  }
  return days;
}
