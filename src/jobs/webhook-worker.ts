import type { FastifyBaseLogger } from 'fastify';
import type { ClaimedDelivery } from '../domain/webhooks/deliveries.repository.js';
import type { Attempted, WebhookDeliveryService } from '../domain/webhooks/delivery.service.js';

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

/** Connections a worker keeps open at most, as a multiple of its slots: slow attempts stop holding a slot, not a socket. */
export const OPEN_PER_SLOT = 8;

export interface WorkerOptions {
  /** The idle poll interval (WEBHOOK_POLL_MS). */
  pollMs: number;
  /** Attempts sent at once (WEBHOOK_CONCURRENCY), not counting slow ones. */
  slots: number;
  /** An attempt in flight longer than this gives its slot back (SLOW_ATTEMPT_MS). */
  slowMs: number;
  /** Attempts in flight at most, slow ones included; `slots` × OPEN_PER_SLOT unless told. */
  maxOpen?: number;
  timer?: WorkerTimer;
  /** Narrows the claims (a test's own endpoints, on a database other tests share). */
  endpointIds?: readonly string[];
}

type Deliveries = Pick<WebhookDeliveryService, 'claim' | 'attempt' | 'record'>;

/**
 * Sends webhook deliveries (ADR 0013, ADR 0015). Every instance runs one: deliveries are claimed
 * with FOR UPDATE SKIP LOCKED leases, so two workers never send the same delivery at once, and what
 * a stopped process had in hand comes due again for any instance.
 *
 * A pool, not a batch: whenever a slot is free it claims as many deliveries as slots are free and
 * starts each at once; a finished attempt frees its slot and the next claim follows. Nothing waits
 * for the slowest of a group. An attempt still running after `slowMs` gives its slot back too
 * (it keeps its connection until it answers or times out, up to `maxOpen` of them), so endpoints
 * that never answer cost this worker connections, not the slots every other app's events need;
 * the claim gives such an endpoint no second attempt meanwhile.
 *
 * Outcomes are recorded as they finish, in groups: whatever finished while the last group was
 * being written goes in the next, one transaction each, so a commit per delivery does not bound
 * the rate. A recording that commits may give an endpoint room again, so it prompts a look.
 *
 * With free slots and nothing claimed, it sleeps BUSY_POLL_MS after a look that found something,
 * doubling at each empty look up to `pollMs`, the idle interval; a freed slot or a recording
 * wakes it sooner. A fault (the database away) is logged and waits a whole `pollMs`.
 */
export function startWebhookWorker(
  deliveries: Deliveries,
  log: FastifyBaseLogger,
  options: WorkerOptions,
): WebhookWorker {
  const timer = options.timer ?? realTimer;
  const busyPollMs = Math.min(BUSY_POLL_MS, options.pollMs);
  const maxOpen = options.maxOpen ?? options.slots * OPEN_PER_SLOT;
  let stopped = false;
  let sleepMs = options.pollMs;
  /** Attempts holding a slot. */
  let active = 0;
  /** Attempts not yet finished, slow ones included. */
  const open = new Set<Promise<void>>();
  /** Finished attempts waiting to be recorded, and the recording under way. */
  let finished: Attempted[] = [];
  let recording: Promise<void> | undefined;

  // The loop sleeps until the timer fires or something changes: a slot freed, a recording committed,
  // stop(). A change while it is not asleep (during a claim) makes its next sleep return at once.
  let wake: (() => void) | undefined;
  let poked = false;
  const poke = () => {
    if (wake === undefined) poked = true;
    else wake();
  };
  const sleep = (ms: number): Promise<void> => {
    if (poked) {
      poked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const wait = timer.schedule(() => {
        wake = undefined;
        resolve();
      }, ms);
      wake = () => {
        wake = undefined;
        wait.cancel();
        resolve();
      };
    });
  };

  const recordFinished = () => {
    if (recording !== undefined || finished.length === 0) return;
    const group = finished;
    finished = [];
    recording = deliveries
      .record(group)
      .catch((error: unknown) => {
        // Their leases end and they come due again: sent twice, never lost.
        log.error(
          { err: error, deliveries: group.length },
          'recording webhook outcomes failed; they will be sent again',
        );
      })
      .then(() => {
        recording = undefined;
        poke();
        recordFinished();
      });
  };

  const start = (delivery: ClaimedDelivery) => {
    active += 1;
    let holding = true;
    const release = () => {
      if (!holding) return;
      holding = false;
      active -= 1;
      poke();
    };
    const slow = timer.schedule(release, options.slowMs);
    const running: Promise<void> = deliveries
      .attempt(delivery)
      .then((attempted) => {
        finished.push(attempted);
      })
      .catch((error: unknown) => {
        // Not sent, or not known to be: its lease ends and it comes due again.
        log.error({ err: error, delivery: delivery.id }, 'webhook attempt failed unexpectedly');
      })
      .finally(() => {
        slow.cancel();
        open.delete(running);
        release();
        recordFinished();
      });
    open.add(running);
  };

  const loop = async () => {
    while (!stopped) {
      const room = Math.min(options.slots - active, maxOpen - open.size);
      if (room <= 0) {
        // Full: a finished or slow attempt frees a slot and wakes this.
        await sleep(options.pollMs);
        continue;
      }
      let claimed: ClaimedDelivery[];
      try {
        claimed = await deliveries.claim(room, options.endpointIds);
      } catch (error) {
        log.error({ err: error }, 'claiming webhook deliveries failed; will retry');
        sleepMs = options.pollMs;
        await sleep(sleepMs);
        continue;
      }
      if (stopped) {
        // Claimed as stop() came: sent all the same, rather than left to wait out their lease.
        for (const delivery of claimed) start(delivery);
        break;
      }
      for (const delivery of claimed) start(delivery);
      // A full claim may have left more due: look again as soon as a slot is free.
      if (claimed.length === room) {
        sleepMs = busyPollMs;
        continue;
      }
      sleepMs = claimed.length > 0 ? busyPollMs : Math.min(sleepMs * 2, options.pollMs);
      await sleep(sleepMs);
    }
  };
  const looping = loop();

  return {
    async stop() {
      stopped = true;
      poke();
      await looping;
      while (open.size > 0) await Promise.all([...open]);
      while (recording !== undefined || finished.length > 0) {
        recordFinished();
        await recording;
      }
    },
  };
}
