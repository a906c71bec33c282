import type { FastifyBaseLogger } from 'fastify';
import type { WebhookDeliveryService } from '../domain/webhooks/delivery.service.js';

export interface WebhookWorker {
  /** Stops claiming and waits for the deliveries in hand, so their outcomes are recorded. */
  stop(): Promise<void>;
}

/** What the worker waits with; tests replace it to run without real time passing. */
export interface WorkerTimer {
  schedule(callback: () => void, ms: number): { cancel(): void };
}

export const realTimer: WorkerTimer = {
  schedule(callback, ms) {
    const handle = setTimeout(callback, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

/** How soon a worker that just sent something looks again; each look that finds nothing doubles it. */
export const BUSY_POLL_MS = 50;

/**
 * Sends webhook deliveries (ADR 0013). Every instance runs one: deliveries are claimed with
 * FOR UPDATE SKIP LOCKED, so two workers never send the same delivery at once, and what a stopped
 * process had in hand comes due again for any instance.
 *
 * Drains what is due, batch after batch, until a look finds nothing. Events keep committing while
 * a batch is sent, so stopping at a batch short of full (as it once did) slept with work due. It
 * then sleeps: BUSY_POLL_MS after a drain that sent something, doubling at each empty look up to
 * `pollMs`, the idle interval. While events flow (an async order queue applied a batch at a time)
 * an event waits tens of milliseconds for the next look rather than up to a whole `pollMs`; an
 * idle worker still looks once per `pollMs`. The loop cannot spin on the same rows: a claim leases
 * them, and a failed attempt is due again only after its backoff.
 */
export function startWebhookWorker(
  deliveries: Pick<WebhookDeliveryService, 'deliverDue'>,
  log: FastifyBaseLogger,
  options: { pollMs: number; batch: number; timer?: WorkerTimer },
): WebhookWorker {
  const timer = options.timer ?? realTimer;
  const busyPollMs = Math.min(BUSY_POLL_MS, options.pollMs);
  let stopped = false;
  let pending: { cancel(): void } | undefined;
  let running: Promise<void> | undefined;
  let sleepMs = options.pollMs;

  /** Whether it sent anything. */
  const drain = async (): Promise<boolean> => {
    let sent = false;
    try {
      while (!stopped && (await deliveries.deliverDue(options.batch)) > 0) sent = true;
    } catch (error) {
      log.error({ err: error }, 'webhook delivery failed; will retry');
      // A fault (the database away) is not a reason to look again soon.
      sleepMs = options.pollMs;
      return false;
    }
    return sent;
  };
  const tick = () => {
    running = drain().then((sent) => {
      running = undefined;
      sleepMs = sent ? busyPollMs : Math.min(sleepMs * 2, options.pollMs);
      if (!stopped) pending = timer.schedule(tick, sleepMs);
    });
  };
  tick();

  return {
    async stop() {
      stopped = true;
      pending?.cancel();
      await running;
    },
  };
}
