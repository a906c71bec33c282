import type { LicenseNoticeConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import {
  ExpiringLicensesRepository,
  type EndRange,
  type ExpiringLicense,
} from './expiring-licenses.repository.js';
import { DAY_MS, LicenseNoticesRepository } from './license-notices.repository.js';

export type { ExpiringLicense };

/** Licenses listed at most: a page and the CLI show the soonest, not a year's renewals at once. */
export const EXPIRING_LIMIT_MAX = 1000;

/**
 * A license that ended longer ago than this gets no `license.expired`: on the first run after an
 * upgrade, years of ended licenses would otherwise each raise one at once. A week covers a server
 * that was down over a long weekend.
 */
export const EXPIRED_LOOKBACK_DAYS = 7;

/** Notices written per statement, and statements per pass: a backlog drains over a few minutes. */
const NOTICE_BATCH = 500;
const BATCHES_PER_PASS = 10;

/**
 * How often a pass reads every license near its end rather than only those whose end crossed a
 * threshold since the last pass. Between full passes a minute's pass reads a minute's worth of
 * ends per threshold, next to nothing; the full pass finds what the narrow ones cannot: a license
 * ordered or renewed with its end already inside a threshold (it is told within the hour).
 */
export const FULL_PASS_MS = 3_600_000;

/** The narrow passes overlap the last by this much, so no end falls between two passes. */
const OVERLAP_MS = 60_000;

/** Renewals in sight: licenses near their end, and the notices sent about them. */
export class LicensesService {
  private readonly expiringRepo: ExpiringLicensesRepository;
  private readonly notices: LicenseNoticesRepository;
  /** This instance's last pass, and its last full one (each instance keeps its own). */
  private lastPass: number | undefined;
  private lastFullPass: number | undefined;

  constructor(
    db: Db,
    private readonly config: LicenseNoticeConfig,
    private readonly now: () => number = Date.now,
  ) {
    this.expiringRepo = new ExpiringLicensesRepository(db);
    this.notices = new LicenseNoticesRepository(db);
  }

  /** The horizon the consoles use when none is asked for (LICENSE_EXPIRING_DAYS). */
  get defaultDays(): number {
    return this.config.expiringDays;
  }

  /**
   * Licenses ending within `days` (LICENSE_EXPIRING_DAYS unless given) from now, soonest first;
   * of one enterprise (its global id) when named.
   */
  async expiring(query: { days?: number; enterprise?: string; limit: number }): Promise<ExpiringLicense[]> {
    const now = this.now();
    const days = query.days ?? this.config.expiringDays;
    return this.expiringRepo.list({
      now: new Date(now),
      until: new Date(now + days * DAY_MS),
      ...(query.enterprise === undefined ? {} : { enterprise: query.enterprise }),
      limit: Math.min(query.limit, EXPIRING_LIMIT_MAX),
    });
  }

  /**
   * Sends the `license.expiring` and `license.expired` notices due now (run by the housekeeping on
   * every instance; the notices table makes each one once). Cheap when none is due: one range read
   * of the licenses near their end. Answers how many it sent.
   */
  async sendNotices(): Promise<number> {
    const now = this.now();
    const full = this.lastFullPass === undefined || now - this.lastFullPass >= FULL_PASS_MS;
    const pass = {
      now: new Date(now),
      noticeDays: this.config.noticeDays,
      ranges:
        full || this.lastPass === undefined ? this.allRanges(now) : this.crossedRanges(this.lastPass, now),
      batch: NOTICE_BATCH,
    };
    let sent = 0;
    let drained = false;
    for (let i = 0; i < BATCHES_PER_PASS && !drained; i++) {
      const n = await this.notices.sendDue(pass);
      sent += n;
      drained = n < NOTICE_BATCH;
    }
    // A backlog left over is looked for in full again next time, not only in the narrow ranges.
    if (full && drained) this.lastFullPass = now;
    this.lastPass = now;
    // No pass looks further back than the lookback: older notices can never be asked about again.
    await this.notices.prune(now - (EXPIRED_LOOKBACK_DAYS + 1) * DAY_MS, NOTICE_BATCH);
    return sent;
  }

  /** Every end a notice could be due for: ended within the lookback, or within the largest threshold. */
  private allRanges(now: number): EndRange[] {
    const furthest = Math.max(0, ...this.config.noticeDays);
    return [[now - EXPIRED_LOOKBACK_DAYS * DAY_MS, now + furthest * DAY_MS]];
  }

  /** The ends that crossed a threshold (or passed) since `since`: one narrow range per threshold. */
  private crossedRanges(since: number, now: number): EndRange[] {
    const from = since - OVERLAP_MS;
    return [0, ...this.config.noticeDays].map((days): EndRange => [
      from + days * DAY_MS,
      now + days * DAY_MS,
    ]);
  }
}
