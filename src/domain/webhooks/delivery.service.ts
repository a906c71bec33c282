import type { WebhookConfig } from '../../config.js';
import type { Db } from '../../db/client.js';
import { workerActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import {
  WebhookDeliveriesRepository,
  type AfterFailure,
  type ClaimedDelivery,
  type ClaimLimits,
} from './deliveries.repository.js';
import { postWebhook, type AttemptResult } from './outbound.js';
import { signatureHeader } from './secrets.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

/** How retries are spaced and when an endpoint is given up on; tests shrink them. */
export interface RetryPolicy {
  /** The wait after the first failed attempt; each further failure doubles it… */
  baseDelayMs: number;
  /** …up to this. */
  maxDelayMs: number;
  /** A delivery is retried until this long after its event; then it has failed. */
  retryWindowMs: number;
  /** An endpoint is disabled after this many failures in a row… */
  disableAfterFailures: number;
  /** …that went on for at least this long. */
  disableAfterMs: number;
  /** An endpoint whose attempt timed out is sent nothing for this long; each timeout in a row doubles it… */
  endpointPauseBaseMs: number;
  /** …up to this, so one that comes back is found again within minutes. */
  endpointPauseMaxMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  baseDelayMs: 5 * SECOND,
  maxDelayMs: 6 * HOUR,
  retryWindowMs: 3 * DAY,
  disableAfterFailures: 10,
  disableAfterMs: 3 * DAY,
  endpointPauseBaseMs: 5 * SECOND,
  endpointPauseMaxMs: 5 * 60 * SECOND,
};

/**
 * An attempt in flight longer than this is slow: its endpoint gets no second one until it answers,
 * and the worker stops counting it against WEBHOOK_CONCURRENCY (src/jobs/webhook-worker.ts). Most
 * receivers answer in a fraction of it; one that never answers is found out in a second, not in the
 * 15 s of WEBHOOK_TIMEOUT_MS.
 */
export const SLOW_ATTEMPT_MS = SECOND;

/** What an attempt came to: the closed label set of `keyward_webhook_deliveries_total`. */
export const DELIVERY_OUTCOMES = ['delivered', 'failed_retrying', 'failed_final'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

/** One attempt made, its outcome not yet recorded. */
export interface Attempted {
  delivery: ClaimedDelivery;
  at: Date;
  done: Date;
  result: AttemptResult;
}

/** A claim to make: up to `limit` deliveries, of `endpointIds` only when given. */
export interface NextClaim {
  limit: number;
  endpointIds?: readonly string[] | undefined;
}

export type Sender = (url: string, headers: Record<string, string>, body: string) => Promise<AttemptResult>;

export interface DeliveryOptions {
  now?: () => number;
  random?: () => number;
  retry?: Partial<RetryPolicy>;
  send?: Sender;
  /** SLOW_ATTEMPT_MS unless told. */
  slowMs?: number;
}

/** The body of an event's deliveries: built from the event row alone, so every attempt sends the same bytes. */
export function eventBody(event: ClaimedDelivery['event']): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    timestamp: event.occurredAt.toISOString(),
    scope: { channels: event.channels, enterpriseId: event.enterpriseId, appKey: event.appKey },
    data: event.data,
    requestId: event.requestId,
  });
}

/** The wait before attempt `failed + 1`: exponential, capped, with ±20 % jitter so retries spread out. */
export function retryDelayMs(failed: number, policy: RetryPolicy, random: () => number): number {
  const exponential = Math.min(policy.baseDelayMs * 2 ** Math.min(failed - 1, 30), policy.maxDelayMs);
  return Math.round(exponential * (0.8 + 0.4 * random()));
}

/**
 * Sends due deliveries: at least once, each attempt kept, failures retried with backoff for the
 * retry window, and an endpoint that keeps failing disabled with an `endpoint.disabled` audit row.
 * Claims are fair (docs/adr/0015): endpoints in turn, a few in flight each, and one that keeps
 * timing out paused, so no app's endpoints hold back another's.
 */
export class WebhookDeliveryService {
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly retry: RetryPolicy;
  private readonly send: Sender;
  /** How long a claim keeps other workers off a delivery: longer than an attempt can take. */
  private readonly leaseMs: number;
  private readonly limits: ClaimLimits;
  private readonly listeners: Array<(outcome: DeliveryOutcome) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly config: WebhookConfig,
    options: DeliveryOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.retry = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.send = options.send ?? ((url, headers, body) => postWebhook(url, headers, body, config));
    this.leaseMs = 2 * config.timeoutMs + 5 * SECOND;
    this.limits = { perEndpoint: config.endpointConcurrency, slowMs: options.slowMs ?? SLOW_ATTEMPT_MS };
  }

  /** Calls `listener` with the outcome of each attempt this process records (the metrics count them). */
  onOutcome(listener: (outcome: DeliveryOutcome) => void): void {
    this.listeners.push(listener);
  }

  /** Pending deliveries of enabled endpoints, due now or waiting for a retry. */
  async backlog(): Promise<{ due: number; waiting: number }> {
    return new WebhookDeliveriesRepository(this.db).backlog(new Date(this.now()));
  }

  /**
   * Claims up to `limit` due deliveries, fairly: endpoints with room in turn, round-robin, each
   * leased to this caller until recorded. One transaction: the endpoints are locked first, then
   * their deliveries counted and taken, so the per-endpoint bound holds over every instance.
   * `endpointIds` narrows the claim (a test's own endpoints, on a database other tests share).
   */
  async claim(limit: number, endpointIds?: readonly string[]): Promise<ClaimedDelivery[]> {
    return this.db
      .transaction()
      .execute(async (trx) => this.claimIn(new WebhookDeliveriesRepository(trx), { limit, endpointIds }));
  }

  private async claimIn(repo: WebhookDeliveriesRepository, next: NextClaim): Promise<ClaimedDelivery[]> {
    if (next.limit <= 0) return [];
    const now = new Date(this.now());
    const turns = await repo.lockEndpointsInTurn(now, next.limit, this.limits, next.endpointIds);
    return repo.claimOn(turns, now, next.limit, this.leaseMs, this.limits);
  }

  /**
   * One claim, its deliveries sent at once and their outcomes recorded together, answering how
   * many it claimed. The worker keeps a pool instead, so a slow delivery holds back none of the
   * others; this is for a caller that wants a claim done when it returns (tests, the console's).
   */
  async deliverDue(limit = this.config.concurrency, endpointIds?: readonly string[]): Promise<number> {
    const claimed = await this.claim(limit, endpointIds);
    if (claimed.length === 0) return 0;
    await this.record(await Promise.all(claimed.map((d) => this.attempt(d))));
    return claimed.length;
  }

  /** Sends a claimed delivery once; never throws (a failure is an outcome to record). */
  async attempt(delivery: ClaimedDelivery): Promise<Attempted> {
    const body = eventBody(delivery.event);
    const at = new Date(this.now());
    const headers = {
      'webhook-id': delivery.event.id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': signatureHeader(delivery.secrets, delivery.event.id, at, body),
      'user-agent': 'Keyward-Webhooks/1',
    };
    const result = await this.send(delivery.url, headers, body);
    return { delivery, at, done: new Date(this.now()), result };
  }

  /**
   * Records the outcomes of attempts in one transaction: one commit, and one statement for all the
   * successes. A transaction per delivery made the commits, not the sending, the bound on how many
   * deliveries a worker sends a second; the worker so hands over whatever finished meanwhile. With
   * `next`, the same transaction then claims as `claim` does, the recorded deliveries' endpoints
   * having room again: one commit where a worker would otherwise make two, and the claim the one
   * a finished attempt makes anyway. Answers what it claimed.
   */
  async record(attempts: readonly Attempted[], next?: NextClaim): Promise<ClaimedDelivery[]> {
    if (attempts.length === 0) return next === undefined ? [] : this.claim(next.limit, next.endpointIds);
    const { outcomes, claimed } = await this.db.transaction().execute(async (trx) => {
      const repo = new WebhookDeliveriesRepository(trx);
      const existing = await repo.lockForRecording(
        attempts.map((a) => a.delivery.endpointId),
        attempts.map((a) => a.delivery.id),
      );
      const kept = attempts.filter((a) => existing.has(a.delivery.id));
      const delivered = kept.filter((a) => a.result.ok);
      await repo.recordDelivered(
        delivered.map((a) => ({
          deliveryId: a.delivery.id,
          endpointId: a.delivery.endpointId,
          at: a.at,
          done: a.done,
          row: a.result,
        })),
      );
      const outcomes: DeliveryOutcome[] = delivered.map(() => 'delivered');
      // Failures are few, and each may end its endpoint's streak in a disabling: one at a time.
      for (const failed of kept.filter((a) => !a.result.ok)) {
        outcomes.push(await this.recordFailure(trx, repo, failed));
      }
      // Its own locks (the recorded endpoints) do not make the claim skip them.
      return { outcomes, claimed: next === undefined ? [] : await this.claimIn(repo, next) };
    });
    // Counted once the outcomes are committed: a rolled-back record is attempted again, not counted twice.
    for (const outcome of outcomes) for (const listener of this.listeners) listener(outcome);
    return claimed;
  }

  private async recordFailure(
    trx: Db,
    repo: WebhookDeliveriesRepository,
    { delivery, at, done, result }: Attempted,
  ): Promise<DeliveryOutcome> {
    await repo.insertAttempt(delivery.id, at, result);
    const retryAt = done.getTime() + retryDelayMs(delivery.attempt, this.retry, this.random);
    const after: AfterFailure =
      retryAt > delivery.createdAt.getTime() + this.retry.retryWindowMs
        ? { gaveUp: true }
        : { retryAt: new Date(retryAt) };
    await repo.markFailed(delivery.id, after);
    const streak = await repo.endpointFailed(
      delivery.endpointId,
      done,
      result.timedOut === true
        ? {
            timedOut: true,
            pause: { baseMs: this.retry.endpointPauseBaseMs, maxMs: this.retry.endpointPauseMaxMs },
          }
        : { timedOut: false, answered: result.statusCode !== null },
    );
    if (
      streak !== undefined &&
      streak.status === 'enabled' &&
      streak.failures >= this.retry.disableAfterFailures &&
      done.getTime() - streak.failingSince.getTime() >= this.retry.disableAfterMs
    ) {
      const reason = `${streak.failures} failed attempts in a row since ${streak.failingSince.toISOString()}`;
      await repo.disableEndpoint(delivery.endpointId, reason);
      await new AuditRepository(trx).record(workerActor(delivery.appId), [
        {
          action: 'endpoint.disabled',
          subject: delivery.endpointId,
          enterprise: null,
          detail: {
            failures: streak.failures,
            failingSince: streak.failingSince.toISOString(),
            lastError: result.error,
          },
        },
      ]);
    }
    return 'gaveUp' in after ? 'failed_final' : 'failed_retrying';
  }
}
