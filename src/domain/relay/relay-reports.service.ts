import { decodeJwt } from 'jose';
import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { relayAppId } from '../usage/relay-app-id.js';
import { RollupRepository } from '../usage/rollup.repository.js';
import type { PoolGrantClaims } from './pool-grant.js';
import type { RelayScope } from './relay-grant.service.js';
import { RelayGrantsRepository } from './relay-grants.repository.js';
import { unverifiedReport, verifyRelaySigned, type RelayReportClaims } from './relay-report.js';
import { RelayRequestError, type UsedShare } from './relay-request.js';
import {
  RelayReportsRepository,
  type RelayDenialHour,
  type RelayUsageHour,
} from './relay-reports.repository.js';

/** What `POST /admin/relays/reports` answers. */
export interface ImportedReport {
  reportId: string;
  relayId: string;
  grantId: string;
  hours: number;
  /** Milliseconds since the epoch: the first and last hour it holds, or null for none. */
  firstHour: number | null;
  lastHour: number | null;
  peakSeats: number;
  /** The most seats past the grant in any hour: what an overage allowance let through. */
  overagePeak: number;
  seatHours: number;
  refused: number;
  /** What the relay had used of each share of a usage limit its grant holds, when it wrote the report. */
  used: UsedShare[];
}

const refuse = (message: string, httpStatus = 400) =>
  new KeywardError(RuntimeCode.validation, message, { cause: message, httpStatus });

/**
 * A relay's usage report imported at the vendor (`keyward relay import-report`): checked against
 * the relay key its grant certified (a changed report fails its signature), refused when its relay
 * has no grant here, when it names a grant or license the relay was not given, when it was
 * imported already or is older than the last imported. Its hours join the usage rollups under the
 * relay's own app id, so the usage pages and charts count them, marked as via relay; a later
 * report's figures for an hour replace an earlier one's.
 */
export class RelayReportsService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  /** `scope.enterpriseId`: an enterprise administrator's import, of its own relays' reports only. */
  async importReport(text: string, actor: AuditActor, scope: RelayScope = {}): Promise<ImportedReport> {
    let token: string;
    let claims: RelayReportClaims;
    try {
      ({ token, claims } = unverifiedReport(text));
    } catch (error) {
      if (error instanceof RelayRequestError) throw refuse(error.message);
      throw error;
    }
    const grants = (await new RelayGrantsRepository(this.db).ofRelay(claims.sub)).filter(
      (g) => scope.enterpriseId === undefined || g.enterpriseId === scope.enterpriseId,
    );
    if (grants.length === 0) throw refuse(`sub: relay ${claims.sub} was never granted seats here`, 404);
    const grant = grants.find((g) => g.id === claims.grant);
    if (grant === undefined) throw refuse(`grant: ${claims.grant} is not a grant of relay ${claims.sub}`);
    const granted = decodeJwt(grant.token) as unknown as PoolGrantClaims;
    try {
      await verifyRelaySigned(token, granted.relay.key, 'report');
    } catch (error) {
      if (error instanceof RelayRequestError) throw refuse(error.message);
      throw error;
    }
    // Seats of each license the relay was ever granted, by its newest grant.
    const seatsOf = new Map<string, number>();
    for (const g of [...grants].reverse()) {
      for (const l of g.licenses) seatsOf.set(`${l.assetNum}\u0000${l.crmProductId ?? ''}`, l.seats);
    }
    claims.hours.forEach((h, i) => {
      if (!seatsOf.has(`${h.assetNum}\u0000${h.crmProductId}`)) {
        throw refuse(`hours[${i}]: ${h.assetNum}/${h.crmProductId} was never granted to relay ${claims.sub}`);
      }
    });

    const reports = new RelayReportsRepository(this.db);
    const pairs = [
      ...new Map(claims.hours.map((h) => [`${h.assetNum}\u0000${h.crmProductId}`, h])).values(),
    ].map((h) => ({ assetNum: h.assetNum, crmProductId: h.crmProductId }));
    const licenses = new Map(
      (await reports.licenses(pairs)).map((l) => [`${l.assetNum}\u0000${l.crmProductId}`, l]),
    );
    const hours: RelayUsageHour[] = [];
    const denials: RelayDenialHour[] = [];
    for (const h of claims.hours) {
      const key = `${h.assetNum}\u0000${h.crmProductId}`;
      const license = licenses.get(key);
      if (license === undefined) continue;
      hours.push({
        at: new Date(h.at),
        productId: license.productId,
        enterpriseId: license.enterpriseId,
        product: h.crmProductId,
        assetNum: h.assetNum,
        licensedSeats: seatsOf.get(key) ?? 0,
        peakSeats: h.peakSeats,
        seatMs: h.seatMs,
      });
      for (const [code, denied] of Object.entries(h.refusals)) {
        denials.push({
          at: new Date(h.at),
          product: h.crmProductId,
          enterpriseId: license.enterpriseId,
          code: Number(code),
          denied,
        });
      }
    }
    const summary: ImportedReport = {
      reportId: claims.jti,
      relayId: claims.sub,
      grantId: claims.grant,
      hours: claims.hours.length,
      // Folded, not spread: a report may hold tens of thousands of hours, past what a call's
      // arguments may number.
      firstHour: claims.hours.reduce<number | null>((m, h) => (m === null || h.at < m ? h.at : m), null),
      lastHour: claims.hours.reduce<number | null>((m, h) => (m === null || h.at > m ? h.at : m), null),
      peakSeats: claims.hours.reduce((m, h) => Math.max(m, h.peakSeats), 0),
      overagePeak: claims.hours.reduce((m, h) => Math.max(m, h.overage), 0),
      seatHours: Math.round(claims.hours.reduce((sum, h) => sum + h.seatMs, 0) / 36_000) / 100,
      refused: denials.reduce((sum, d) => sum + d.denied, 0),
      used: claims.used ?? [],
    };
    await this.db.transaction().execute(async (trx) => {
      const within = new RelayReportsRepository(trx);
      const latest = await within.latest(claims.sub);
      if (latest !== undefined && latest.id === claims.jti) {
        throw refuse(`report: ${claims.jti} was imported already`, 409);
      }
      if (latest !== undefined && latest.issuedAt.getTime() > claims.iat * 1000) {
        throw refuse(
          `report: older than report ${latest.id}, imported already: a replay is not imported`,
          409,
        );
      }
      const inserted = await within.insert({
        id: claims.jti,
        relayId: claims.sub,
        grantId: claims.grant,
        issuedAt: new Date(claims.iat * 1000),
        firstHour: summary.firstHour === null ? null : new Date(summary.firstHour),
        lastHour: summary.lastHour === null ? null : new Date(summary.lastHour),
        hours: summary.hours,
        peakSeats: summary.peakSeats,
        overagePeak: summary.overagePeak,
        used: summary.used,
        seatMs: claims.hours.reduce((sum, h) => sum + h.seatMs, 0),
        refused: summary.refused,
        auditEntries: claims.audit.entries,
        auditDigest: claims.audit.digest,
        importedAt: new Date(this.now()),
      });
      if (!inserted) throw refuse(`report: ${claims.jti} was imported already`, 409);
      const days = await within.writeHours(relayAppId(claims.sub), hours);
      await new RollupRepository(trx).recountDays(days);
      await within.writeDenials(relayAppId(claims.sub), denials);
      await new AuditRepository(trx).record(actor, [
        {
          action: 'relay.reported',
          subject: claims.sub,
          enterprise: grant.enterpriseId === null ? null : { id: grant.enterpriseId },
          detail: {
            reportId: claims.jti,
            grantId: claims.grant,
            hours: summary.hours,
            peakSeats: summary.peakSeats,
            overagePeak: summary.overagePeak,
            refused: summary.refused,
            auditDigest: claims.audit.digest,
          },
        },
      ]);
    });
    return summary;
  }
}
