import type { Db } from '../../db/client.js';
import {
  enterpriseProducts,
  enterpriseUsage,
  type EnterpriseUsage,
  type EnterpriseUsageQuery,
} from './enterprise-usage.js';
import { licenseCharts, type SaturationReport } from './license-charts.js';
import { bucketRange, DAY_MS, floorTo, HOUR_MS, UsageInputError } from './usage-range.js';
import { simulateUsage, type SimulationResult } from './usage-simulation.js';
import {
  UsageRepository,
  type Bucket,
  type LicenseName,
  type LicenseTotals,
  type UsageScope,
} from './usage.repository.js';

/** A filter as the admin API, the CLI and the console give it. */
export interface UsageQuery {
  /** crmProductId or productUri. */
  product?: string;
  /** An enterprise's global id. */
  enterprise?: string;
  /** An app's key. */
  app?: string;
  from?: Date;
  to?: Date;
  bucket?: Bucket;
}

/** One point of the series; utilization is seat-hours used over seat-hours licensed. */
export interface UsagePoint {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
  utilization: number | null;
  denied: number;
  deniedByCode: Record<string, number>;
  consumed: number;
}

export interface LicenseLine {
  product: string;
  assetNum: string;
  enterpriseId: number;
  enterpriseName: string | null;
  licensedSeats: number | null;
  peakSeats: number;
  seatHours: number;
  utilization: number | null;
  bucketsAtCapacity: number;
}

export interface UsageReport {
  bucket: Bucket;
  from: number;
  to: number;
  series: UsagePoint[];
  /** Refused check-outs over the range, by code. */
  deniedByCode: Record<string, number>;
  /** Licenses whose peak reached their seats most often (most first). */
  atCapacity: LicenseLine[];
  /** Licenses with seats never at capacity in the range, least used first. */
  leastUsed: LicenseLine[];
  /** Usage in the range that relays reported (docs/relay.md), per relay: it is in the series too. */
  viaRelay: RelayUsageLine[];
}

export interface RelayUsageLine {
  relayId: string;
  peakSeats: number;
  seatHours: number;
}

function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

/** A license's line: its numbers over the range, and (once chosen to be shown) its names. */
function lineOf(l: LicenseTotals, name: LicenseName, bucketMs: number): LicenseLine {
  return { ...name, ...numbersOf(l, bucketMs) };
}

function numbersOf(l: LicenseTotals, bucketMs: number) {
  const licensedMs = l.licensedSeats === null ? null : l.licensedSeats * l.buckets * bucketMs;
  return {
    licensedSeats: l.licensedSeats,
    peakSeats: l.peakSeats,
    seatHours: round(l.seatMs / HOUR_MS),
    utilization: licensedMs === null || licensedMs === 0 ? null : round(l.seatMs / licensedMs),
    bucketsAtCapacity: l.bucketsAtCapacity,
  };
}

const UNNAMED: LicenseName = { product: '', assetNum: '', enterpriseId: 0, enterpriseName: null };

/**
 * Usage history read from the rollups: seats per bucket against the seats licensed, refusals by
 * code, consumption, and the licenses at capacity or least used. Peaks over several licenses are
 * the sum of each license's peak in the bucket (their seats are separate pools, counted apart).
 */
export class UsageService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** The filter checked and resolved; an unknown enterprise or app is an input error naming it. */
  async scope(query: UsageQuery): Promise<UsageScope> {
    const bucket = query.bucket ?? 'day';
    const { from, to } = bucketRange({ from: query.from, to: query.to, bucket }, this.now());
    const repository = new UsageRepository(this.db);
    let enterpriseId: number | null = null;
    if (query.enterprise !== undefined) {
      const found = await repository.enterpriseIds(query.enterprise);
      if (found.length === 0) {
        throw new UsageInputError('enterprise', `no enterprise ${query.enterprise}`, 'unknown');
      }
      if (found.length > 1) {
        throw new UsageInputError(
          'enterprise',
          `more than one enterprise is named ${query.enterprise}: give its code or global id`,
        );
      }
      enterpriseId = found[0] as number;
    }
    // A product nothing answers to is a typo, not thirty periods of zeros.
    if (query.product !== undefined && !(await repository.productKnown(query.product))) {
      throw new UsageInputError(
        'product',
        `${query.product} is unknown: no license or usage names it`,
        'unknown',
      );
    }
    let appId: string | null = null;
    if (query.app !== undefined) {
      // A relay's id names its usage, imported from its reports (docs/relay.md).
      const found = query.app.startsWith('relay_')
        ? await repository.relayAppId(query.app)
        : await repository.appId(query.app);
      if (found === undefined) throw new UsageInputError('app', `no app ${query.app}`, 'unknown');
      appId = found;
    }
    return {
      product: query.product ?? null,
      enterpriseId,
      appId,
      from: new Date(from),
      to: new Date(to),
      bucket,
    };
  }

  async report(query: UsageQuery): Promise<UsageReport> {
    const scope = await this.scope(query);
    return this.reportOf(scope);
  }

  /**
   * `POST /admin/usage/simulate` (the demo): `days` of simulated usage for a new enterprise's
   * licenses, as if the app `appKey` had reported it.
   */
  async simulate(input: { enterprise: string; app: string; days: number }): Promise<SimulationResult> {
    const repository = new UsageRepository(this.db);
    const enterpriseId = await repository.enterpriseId(input.enterprise);
    if (enterpriseId === undefined)
      throw new UsageInputError('enterprise', `no enterprise ${input.enterprise}`, 'unknown');
    const appId = await repository.appId(input.app);
    if (appId === undefined) throw new UsageInputError('app', `no app ${input.app}`, 'unknown');
    return simulateUsage(this.db, this.now(), { enterpriseId, appId, days: input.days });
  }

  /** One enterprise's products, refusals and seat holders (its console; the id from its session). */
  async enterprise(query: EnterpriseUsageQuery): Promise<EnterpriseUsage> {
    return enterpriseUsage(this.db, this.now(), query);
  }

  /** The products one enterprise used or was refused in a range (its console's product filter). */
  async enterpriseProducts(query: Omit<EnterpriseUsageQuery, 'product'>): Promise<string[]> {
    return enterpriseProducts(this.db, this.now(), query);
  }

  /**
   * The platform's last `days` days, a point a day (the dashboard's trend lines): peak seats in
   * use and refused check-outs. Two reads of the daily rollups, no per-license work.
   */
  async trend(days: number): Promise<Array<{ at: number; peakSeats: number; denied: number }>> {
    const to = floorTo(this.now(), 'day') + DAY_MS;
    const scope: UsageScope = {
      product: null,
      enterpriseId: null,
      appId: null,
      from: new Date(to - days * DAY_MS),
      to: new Date(to),
      bucket: 'day',
    };
    const repository = new UsageRepository(this.db);
    const [seats, denials] = await Promise.all([repository.seats(scope), repository.denials(scope)]);
    const points = new Map<number, { at: number; peakSeats: number; denied: number }>();
    for (let at = scope.from.getTime(); at < to; at += DAY_MS)
      points.set(at, { at, peakSeats: 0, denied: 0 });
    for (const row of seats) {
      const point = points.get(row.at.getTime());
      if (point !== undefined) point.peakSeats = row.peakSeats;
    }
    for (const row of denials) {
      const point = points.get(row.at.getTime());
      if (point !== undefined) point.denied += row.denied;
    }
    return [...points.values()];
  }

  /** The report of a resolved scope (the enterprise console fixes its own enterprise). */
  async reportOf(scope: UsageScope): Promise<UsageReport> {
    return (await this.build(scope)).report;
  }

  /**
   * The operator's Usage page: the report, and each license at capacity bucket by bucket (one
   * small chart each), so a full license is seen apart from the platform's sum of every license.
   */
  async saturation(query: UsageQuery): Promise<SaturationReport> {
    const scope = await this.scope(query);
    const { report, atCapacityIds } = await this.build(scope);
    const rows = await new UsageRepository(this.db).licenseSeats(scope, atCapacityIds);
    return { ...report, saturated: licenseCharts(scope, report.atCapacity, atCapacityIds, rows) };
  }

  private async build(scope: UsageScope): Promise<{ report: UsageReport; atCapacityIds: number[] }> {
    const repository = new UsageRepository(this.db);
    const size = scope.bucket === 'hour' ? HOUR_MS : DAY_MS;
    const [seats, denials, consumption, licenses, relays] = await Promise.all([
      repository.seats(scope),
      repository.denials(scope),
      repository.consumption(scope),
      repository.licenses(scope),
      repository.relays(scope),
    ]);
    const viaRelay = relays.map((r) => ({
      relayId: r.relayId,
      peakSeats: r.peakSeats,
      seatHours: round(r.seatMs / HOUR_MS),
    }));
    const points = new Map<number, UsagePoint>();
    for (let at = scope.from.getTime(); at < scope.to.getTime(); at += size) {
      points.set(at, {
        at,
        peakSeats: 0,
        licensedSeats: null,
        seatHours: 0,
        utilization: null,
        denied: 0,
        deniedByCode: {},
        consumed: 0,
      });
    }
    for (const row of seats) {
      const point = points.get(row.at.getTime());
      if (point === undefined) continue;
      point.peakSeats = row.peakSeats;
      point.licensedSeats = row.licensedSeats;
      point.seatHours = round(row.seatMs / HOUR_MS);
      point.utilization =
        row.licensedSeats === null || row.licensedSeats === 0
          ? null
          : round(row.seatMs / (row.licensedSeats * size));
    }
    const deniedByCode: Record<string, number> = {};
    for (const row of denials) {
      const code = String(row.code);
      deniedByCode[code] = (deniedByCode[code] ?? 0) + row.denied;
      const point = points.get(row.at.getTime());
      if (point === undefined) continue;
      point.denied += row.denied;
      point.deniedByCode[code] = (point.deniedByCode[code] ?? 0) + row.denied;
    }
    for (const row of consumption) {
      const point = points.get(floorTo(row.at.getTime(), scope.bucket));
      if (point !== undefined) point.consumed += row.amount;
    }
    // The top ten of each list by the numbers, then the names of those twenty at most.
    const ranked = licenses.map((l) => ({ l, n: numbersOf(l, size) }));
    const atCapacity = ranked
      .filter((r) => r.n.bucketsAtCapacity > 0)
      .sort((a, b) => b.n.bucketsAtCapacity - a.n.bucketsAtCapacity || a.l.productId - b.l.productId)
      .slice(0, 10);
    // A license that was full in some period is not one to cut: it is listed at capacity only.
    const leastUsed = ranked
      .filter((r) => r.n.utilization !== null && r.n.bucketsAtCapacity === 0)
      .sort((a, b) => (a.n.utilization ?? 0) - (b.n.utilization ?? 0) || a.l.productId - b.l.productId)
      .slice(0, 10);
    const names = await repository.licenseNames(scope.bucket, [
      ...new Set([...atCapacity, ...leastUsed].map((r) => r.l.productId)),
    ]);
    const line = (r: { l: LicenseTotals }) => lineOf(r.l, names.get(r.l.productId) ?? UNNAMED, size);
    const report: UsageReport = {
      bucket: scope.bucket,
      from: scope.from.getTime(),
      to: scope.to.getTime(),
      series: [...points.values()],
      deniedByCode,
      atCapacity: atCapacity.map(line),
      leastUsed: leastUsed.map(line),
      viaRelay,
    };
    return { report, atCapacityIds: atCapacity.map((r) => r.l.productId) };
  }
}
