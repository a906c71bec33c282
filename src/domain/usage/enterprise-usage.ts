import type { Db } from '../../db/client.js';
import { EnterpriseUsageRepository, type HolderRow, type RefusalRow } from './enterprise-usage.repository.js';
import { bucketRange, bucketSize, HOUR_MS } from './usage-range.js';
import type { Bucket } from './usage.repository.js';

/** The refusals and holders one page lists: the latest, enough to answer "who, this week". */
export const ENTERPRISE_LIST_LIMIT = 200;

export interface ProductPoint {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
  denied: number;
}

/** One product of the enterprise: its series over the range, a point per bucket. */
export interface ProductUsage {
  product: string;
  points: ProductPoint[];
  peakSeats: number;
  /** The most seats licensed in the range (null: unlimited). */
  licensedSeats: number | null;
  denied: number;
  /** Buckets whose peak reached the seats licensed. */
  bucketsAtCapacity: number;
}

export interface EnterpriseUsage {
  bucket: Bucket;
  from: number;
  to: number;
  products: ProductUsage[];
  refusals: RefusalRow[];
  holders: HolderRow[];
  /** The enterprise's usage in the range that its relays reported, per relay: in `products` too. */
  viaRelay: Array<{ relayId: string; peakSeats: number; seatHours: number }>;
}

export interface EnterpriseUsageQuery {
  /** From the administrator's session, never from the request. */
  enterpriseId: number;
  bucket: Bucket;
  product?: string;
  /** The range as the operator's report takes it (usage-range.ts); none: the last 30 days or 48 hours. */
  from?: Date;
  to?: Date;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/**
 * An enterprise's usage for its console: each product's peak against seats licensed and its
 * refusals per bucket over the range (by default 30 days by day, 48 hours by hour, up to the
 * current bucket), who was refused in it, and who holds a seat now.
 */
export async function enterpriseUsage(
  db: Db,
  nowMs: number,
  query: EnterpriseUsageQuery,
): Promise<EnterpriseUsage> {
  const size = bucketSize(query.bucket);
  const { from, to } = bucketRange(query, nowMs);
  const range = {
    enterpriseId: query.enterpriseId,
    from: new Date(from),
    to: new Date(to),
    bucket: query.bucket,
    product: query.product ?? null,
  };
  const repository = new EnterpriseUsageRepository(db);
  const [seats, denials, refusals, holders, relays] = await Promise.all([
    repository.seatsByProduct(range),
    repository.denialsByProduct(range),
    repository.refusals(range, ENTERPRISE_LIST_LIMIT),
    repository.holders(query.enterpriseId, new Date(nowMs), ENTERPRISE_LIST_LIMIT),
    repository.relays(range),
  ]);
  const products = new Map<string, Map<number, ProductPoint>>();
  const pointsOf = (product: string): Map<number, ProductPoint> => {
    let points = products.get(product);
    if (points === undefined) {
      points = new Map();
      for (let at = from; at < to; at += size) {
        points.set(at, { at, peakSeats: 0, licensedSeats: null, seatHours: 0, denied: 0 });
      }
      products.set(product, points);
    }
    return points;
  };
  for (const row of seats) {
    const point = pointsOf(row.product).get(row.at.getTime());
    if (point === undefined) continue;
    point.peakSeats = row.peakSeats;
    point.licensedSeats = row.licensedSeats;
    point.seatHours = round(row.seatMs / HOUR_MS);
  }
  for (const row of denials) {
    const point = pointsOf(row.product).get(row.at.getTime());
    if (point !== undefined) point.denied += row.denied;
  }
  return {
    bucket: query.bucket,
    from,
    to,
    // The products an administrator acts on first: the most often full, then the most refused.
    products: [...products.entries()]
      .map(([product, byAt]) => summary(product, [...byAt.values()]))
      .sort(
        (a, b) =>
          b.bucketsAtCapacity - a.bucketsAtCapacity ||
          b.denied - a.denied ||
          a.product.localeCompare(b.product),
      ),
    refusals,
    holders,
    viaRelay: relays.map((r) => ({
      relayId: r.relayId,
      peakSeats: r.peakSeats,
      seatHours: round(r.seatMs / HOUR_MS),
    })),
  };
}

/**
 * The products an enterprise used or was refused in the range, whatever product the page shows:
 * what its product filter offers, so a filter can be undone (one read, not the usage again).
 */
export async function enterpriseProducts(
  db: Db,
  nowMs: number,
  query: Omit<EnterpriseUsageQuery, 'product'>,
): Promise<string[]> {
  const { from, to } = bucketRange(query, nowMs);
  return new EnterpriseUsageRepository(db).productsIn({
    enterpriseId: query.enterpriseId,
    from: new Date(from),
    to: new Date(to),
    bucket: query.bucket,
  });
}

function summary(product: string, points: ProductPoint[]): ProductUsage {
  const licensed = points.flatMap((p) => (p.licensedSeats === null ? [] : [p.licensedSeats]));
  return {
    product,
    points,
    peakSeats: Math.max(0, ...points.map((p) => p.peakSeats)),
    licensedSeats: licensed.length === 0 ? null : Math.max(...licensed),
    denied: points.reduce((sum, p) => sum + p.denied, 0),
    bucketsAtCapacity: points.filter((p) => p.licensedSeats !== null && p.peakSeats >= p.licensedSeats)
      .length,
  };
}
