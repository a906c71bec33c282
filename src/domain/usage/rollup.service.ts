import type { Db } from '../../db/client.js';
import { RollupRepository, type UsageEvent } from './rollup.repository.js';

const DAY_MS = 86_400_000;

export interface RollupSettings {
  /** USAGE_LEASE_RETENTION_DAYS: raw leases are pruned this long after their seat was free. */
  leaseRetentionDays: number;
  /**
   * USAGE_HOURLY_RETENTION_DAYS: hourly rollups are kept this long; their days stay in the daily
   * rollups, so storage grows by the day, not the hour, past it.
   */
  hourlyRetentionDays: number;
  /** USAGE_RETENTION_DAYS: the daily rollups, refusals and consumption are kept this long. */
  rollupRetentionDays: number;
}

export interface RollupOptions {
  now?: () => number;
  /** Events one transaction rolls: bounded work per transaction, however far behind the job is. */
  batch?: number;
  /**
   * Called inside the transaction after the rollups are written and before it commits: tests
   * throw here to be a crash in the middle of a run.
   */
  beforeCommit?: () => Promise<void>;
}

/** What one run did; `busy` when another instance's run held the lock. */
export interface RollupRun {
  events: number;
  busy: boolean;
}

/**
 * Keeps the usage rollups (migration 0175) from the usage log. Each batch is one transaction
 * under an advisory lock: it reads the oldest events, writes what they change and deletes them,
 * so a crash rolls back all three (the events are rolled again) and nothing is counted twice;
 * a second instance finds the lock taken and leaves the work to the first.
 */
export class RollupService {
  private readonly now: () => number;
  private readonly batch: number;

  constructor(
    private readonly db: Db,
    private readonly settings: RollupSettings,
    private readonly options: RollupOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.batch = options.batch ?? 2000;
  }

  /** Rolls every event there is (batch by batch), and refreshes the hours live leases hold. */
  async run(): Promise<RollupRun> {
    let events = 0;
    for (;;) {
      const batch = await this.rollBatch();
      if (batch.busy) return { events, busy: true };
      events += batch.events;
      if (batch.events < this.batch) return { events, busy: false };
    }
  }

  private async rollBatch(): Promise<RollupRun> {
    const now = new Date(this.now());
    return this.db.transaction().execute(async (trx) => {
      const repository = new RollupRepository(trx);
      if (!(await repository.tryLock())) return { events: 0, busy: true };
      const events = await repository.events(this.batch);
      const ended = events.filter((e) => e.kind === 'ended' && e.leaseId !== null);
      const days = await repository.recountHours(
        ended.map((e) => e.leaseId ?? ''),
        now,
      );
      await repository.recountDays(days);
      await repository.addConsumption(events.filter((e) => e.kind === 'consumed' && e.productId !== null));
      await repository.addDenials(events.filter((e: UsageEvent) => e.kind === 'denied'));
      await repository.deleteEvents(events.map((e) => e.id));
      await this.options.beforeCommit?.();
      return { events: events.length, busy: false };
    });
  }

  /**
   * Prunes raw leases past USAGE_LEASE_RETENTION_DAYS (those the rollups have counted), hourly
   * rollups past USAGE_HOURLY_RETENTION_DAYS and the rest past USAGE_RETENTION_DAYS. Answers how
   * many leases went.
   */
  async prune(limit = 5000): Promise<number> {
    const nowMs = this.now();
    const repository = new RollupRepository(this.db);
    const leases = await repository.pruneLeases(
      new Date(nowMs - this.settings.leaseRetentionDays * DAY_MS),
      limit,
    );
    await repository.pruneHours(new Date(nowMs - this.settings.hourlyRetentionDays * DAY_MS), limit);
    await repository.pruneRollups(new Date(nowMs - this.settings.rollupRetentionDays * DAY_MS));
    return leases;
  }
}
