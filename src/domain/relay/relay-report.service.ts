import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Db } from '../../db/client.js';
import type { RollupService } from '../usage/rollup.service.js';
import { readIfThere } from './relay-home.js';
import { appendRelayAudit, RELAY_STATE_FILES } from './relay-import.js';
import { usedSharesOf } from './relay-licenses.service.js';
import type { RelayKeyMaterial } from './relay-keys.js';
import { RELAY_REQUEST_ISSUER } from './relay-request.js';
import { signRelayReport, type RelayReportClaims, type ReportedHour } from './relay-report.js';
import { RelayUsageRepository } from './relay-usage.repository.js';

/** How far back a report reaches: the relay keeps its hours this long (USAGE_HOURLY_RETENTION_DAYS' default). */
const REPORT_DAYS = 90;

/** What `keyward relay report` writes, and what it says of it. */
export interface WrittenReport {
  reportId: string;
  token: string;
  hours: number;
  /** Milliseconds since the epoch: the first and last hour reported, or null for none. */
  from: number | null;
  to: number | null;
}

/**
 * On a relay: its usage since it started (the last 90 days), per hour, license and product, as a
 * report signed by the relay's key for the vendor to import. Hours are whole UTC hours; the hour
 * under way is reported as it stands, and the next report's figures for it replace these.
 */
export class RelayReportService {
  constructor(
    private readonly db: Db,
    private readonly deps: { relay: RelayKeyMaterial; rollups: RollupService; now?: () => number },
  ) {}

  async write(): Promise<WrittenReport> {
    const now = (this.deps.now ?? Date.now)();
    // Every ended lease counted first: the report is as fresh as the relay's own charts.
    await this.deps.rollups.run();
    const from = new Date(now - REPORT_DAYS * 86_400_000);
    const to = new Date(now + 3_600_000);
    const usage = new RelayUsageRepository(this.db);
    const [hours, denials] = await Promise.all([usage.hours(from, to), usage.denials(from, to)]);
    const granted = this.deps.relay.grant.licenses;
    // Read once, not per row: a report holds up to 90 days of hours of every license.
    const seatsOf = new Map(granted.map((l) => [`${l.assetNum}\u0000${l.crmProductId ?? ''}`, l.seats]));
    const licenseOf = new Map(granted.map((l) => [l.crmProductId ?? '', l]));
    const rows = new Map<string, ReportedHour>();
    const keyOf = (at: number, assetNum: string, product: string) => `${at}\u0000${assetNum}\u0000${product}`;
    for (const h of hours) {
      const at = h.at.getTime();
      const seats = seatsOf.get(`${h.assetNum}\u0000${h.product}`);
      rows.set(keyOf(at, h.assetNum, h.product), {
        at,
        assetNum: h.assetNum,
        crmProductId: h.product,
        peakSeats: h.peakSeats,
        seatMs: Math.round(h.seatMs),
        refusals: {},
        // Seats past the grant's at the hour's peak: what an overage allowance let through.
        overage: seats === undefined ? 0 : Math.max(0, h.peakSeats - seats),
      });
    }
    // A refusal names the product the machine asked for; the grant says which license holds it.
    for (const d of denials) {
      const license = licenseOf.get(d.product);
      if (license === undefined) continue;
      const at = d.at.getTime();
      const key = keyOf(at, license.assetNum, d.product);
      const row = rows.get(key) ?? {
        at,
        assetNum: license.assetNum,
        crmProductId: d.product,
        peakSeats: 0,
        seatMs: 0,
        refusals: {},
        overage: 0,
      };
      row.refusals[String(d.code)] = (row.refusals[String(d.code)] ?? 0) + d.denied;
      rows.set(key, row);
    }
    const reported = [...rows.values()].sort((a, b) => a.at - b.at);
    const used = await usedSharesOf(this.db, this.deps.relay.grant, now);
    const auditText = readIfThere(path.join(this.deps.relay.dir, RELAY_STATE_FILES.audit)) ?? '';
    const claims: RelayReportClaims = {
      iss: RELAY_REQUEST_ISSUER,
      sub: this.deps.relay.grant.sub,
      jti: randomUUID(),
      iat: Math.floor(now / 1000),
      grant: this.deps.relay.grant.jti,
      hours: reported,
      audit: {
        entries: auditText.split('\n').filter((line) => line !== '').length,
        digest: createHash('sha256').update(auditText).digest('hex'),
      },
      ...(used.length === 0 ? {} : { used }),
    };
    const token = await signRelayReport(claims, this.deps.relay.key);
    appendRelayAudit(this.deps.relay.dir, {
      at: new Date(now).toISOString(),
      event: 'report.written',
      reportId: claims.jti,
      hours: reported.length,
    });
    return {
      reportId: claims.jti,
      token,
      hours: reported.length,
      from: reported[0]?.at ?? null,
      to: reported[reported.length - 1]?.at ?? null,
    };
  }
}
