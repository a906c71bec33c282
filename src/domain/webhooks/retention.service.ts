import type { Db } from '../../db/client.js';
import { WebhookRetentionRepository } from './retention.repository.js';

const DAY_MS = 24 * 3600 * 1000;

/** How much one run deletes; tests shrink it. */
export interface PruneBounds {
  /** Events one statement deletes: bounded work per statement, however far behind pruning is. */
  batch: number;
  /** Statements one run may spend: at most 50,000 events a minute per instance by default. */
  batchesPerRun: number;
}

const DEFAULT_BOUNDS: PruneBounds = { batch: 5000, batchesPerRun: 10 };

/**
 * Keeps webhook events, deliveries and attempts for WEBHOOK_RETENTION_DAYS: every audited change
 * writes an event whether or not an endpoint subscribes (so that a replay can send it later), and
 * without a bound the tables would grow for ever. An event a delivery still waits to send (its
 * endpoint is disabled) stays until that delivery ends. Replays reach back as far as this.
 */
export class WebhookRetentionService {
  constructor(
    private readonly db: Db,
    private readonly retentionDays: number,
    private readonly now: () => number = Date.now,
    private readonly bounds: PruneBounds = DEFAULT_BOUNDS,
  ) {}

  /** Deletes what has outlived the retention; answers how many events went. */
  async prune(): Promise<number> {
    const cutoff = new Date(this.now() - this.retentionDays * DAY_MS);
    const repository = new WebhookRetentionRepository(this.db);
    let pruned = 0;
    for (let round = 0; round < this.bounds.batchesPerRun; round += 1) {
      const deleted = await repository.pruneBefore(cutoff, this.bounds.batch);
      pruned += deleted;
      if (deleted < this.bounds.batch) break;
    }
    return pruned;
  }
}
