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

/**
 * Sends webhook deliveries (ADR 0013). Every instance runs one: deliveries are claimed with
 * FOR UPDATE SKIP LOCKED, so two workers never send the same delivery at once, and what a stopped
 * process had in hand comes due again for any instance. Drains what is due, then sleeps `pollMs`.
 */
export function startWebhookWorker(
  deliveries: Pick<WebhookDeliveryService, 'deliverDue'>,
  log: FastifyBaseLogger,
  options: { pollMs: number; batch: number; timer?: WorkerTimer },
): WebhookWorker {
  const timer = options.timer ?? realTimer;
  let stopped = false;
  let pending: { cancel(): void } | undefined;
  let running: Promise<void> | undefined;

  const drain = async () => {
    try {
      // A full batch means more may be due: go on at once.
      while (!stopped && (await deliveries.deliverDue(options.batch)) === options.batch) {
        // keep going
      }
    } catch (error) {
      log.error({ err: error }, 'webhook delivery failed; will retry');
    }
  };
  const tick = () => {
    running = drain().finally(() => {
      running = undefined;
      if (!stopped) pending = timer.schedule(tick, options.pollMs);
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
