import type { FastifyBaseLogger } from 'fastify';
import type { OrdersService } from '../domain/orders/orders.service.js';

export interface OrderWorker {
  /** Stops polling and waits for the batch in hand, so the database can close after it. */
  stop(): Promise<void>;
}

/**
 * Applies async license orders (DOMAIN.md §5). Every instance may run one: batches are claimed
 * with FOR UPDATE SKIP LOCKED and marked in the transaction that applies them, so each is applied
 * exactly once, and what was pending when a process stopped is picked up by the next poll of any
 * instance. Drains the queue, then sleeps `pollMs`.
 */
export function startOrderWorker(
  orders: Pick<OrdersService, 'processNextBatch'>,
  log: FastifyBaseLogger,
  options: { pollMs?: number } = {},
): OrderWorker {
  const pollMs = options.pollMs ?? 1000;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;

  const drain = async () => {
    try {
      while (!stopped && (await orders.processNextBatch())) {
        // one batch per transaction; keep going while there is work
      }
    } catch (error) {
      // A fault (not a refused order): the batch stays pending and is retried on the next poll.
      log.error({ err: error }, 'async order batch failed; will retry');
    }
  };
  const tick = () => {
    running = drain().finally(() => {
      running = undefined;
      if (!stopped) {
        timer = setTimeout(tick, pollMs);
        timer.unref();
      }
    });
  };
  tick();

  return {
    async stop() {
      stopped = true;
      if (timer !== undefined) clearTimeout(timer);
      await running;
    },
  };
}
