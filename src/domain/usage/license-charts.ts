import { bucketSize, HOUR_MS } from './usage-range.js';
import type { LicenseSeatRow, UsageScope } from './usage.repository.js';
import type { LicenseLine, UsageReport } from './usage.service.js';

/** One license's bucket: the seats its busiest app held at the peak, against its seats. */
export interface LicensePoint {
  at: number;
  peakSeats: number;
  licensedSeats: number | null;
  seatHours: number;
}

/** A license at capacity: its line of the list, and its series over the range. */
export interface LicenseChart {
  line: LicenseLine;
  points: LicensePoint[];
}

/** The report, and a chart of each license it lists at capacity (the same order). */
export interface SaturationReport extends UsageReport {
  saturated: LicenseChart[];
}

/**
 * Each license's rows spread over every bucket of the range (a bucket it was not counted in is
 * empty, as on the platform's chart). Refusals are kept per product and enterprise, not per
 * license: a license's chart draws seats only.
 */
export function licenseCharts(
  scope: UsageScope,
  lines: readonly LicenseLine[],
  productIds: readonly number[],
  rows: readonly LicenseSeatRow[],
): LicenseChart[] {
  const size = bucketSize(scope.bucket);
  const byLicense = new Map<number, Map<number, LicenseSeatRow>>();
  for (const row of rows) {
    const own = byLicense.get(row.productId) ?? new Map<number, LicenseSeatRow>();
    own.set(row.at.getTime(), row);
    byLicense.set(row.productId, own);
  }
  return lines.map((line, i) => {
    const own = byLicense.get(productIds[i] ?? -1);
    const points: LicensePoint[] = [];
    for (let at = scope.from.getTime(); at < scope.to.getTime(); at += size) {
      const row = own?.get(at);
      points.push({
        at,
        peakSeats: row?.peakSeats ?? 0,
        // A bucket the license was not counted in still had its seats.
        licensedSeats: row === undefined ? line.licensedSeats : row.licensedSeats,
        seatHours: row === undefined ? 0 : Math.round((row.seatMs / HOUR_MS) * 1000) / 1000,
      });
    }
    return { line, points };
  });
}
