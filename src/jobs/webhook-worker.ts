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

/** How long a finished attempt waits for others still running, to be recorded with them. */
export const GROUP_MS = 10;

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
 * Outcomes are recorded as they finish, in groups, and the recording claims the successors of the
 * attempts it records in the same transaction (their endpoints have room again once it commits):
 * one commit per group, where recording and then claiming would take two. A finished attempt waits
 * GROUP_MS for the others still running to join its group, and what finishes while a group is
 * written goes in the next, so a commit per delivery does not bound the rate.
 *
 * With free slots and nothing claimed, it sleeps BUSY_POLL_MS after a look (its own or a
 * recording's claim) that found something, doubling at each empty look up to `pollMs`, the idle
 * interval; a slow attempt giving its slot back, or a recording's claim that found work, wakes it
 * sooner. A fault (the database away) is logged and waits a whole `pollMs`.
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
  /** Attempts holding a slot, and slots set aside for claims under way (the loop's and the recorder's). */
  let active = 0;
  let claiming = 0;
  let waitingForSlot = false;
  let foundSinceLook = false;
  const room = () => Math.min(options.slots - active, maxOpen - open.size) - claiming;
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
  /** Shortens the loop's sleep to `ms` from now, when it sleeps longer: a recording's claim found work. */
  let hurry: ((ms: number) => void) | undefined;
  const sleep = (ms: number): Promise<void> => {
    if (poked) {
      poked = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      const done = () => {
        wake = undefined;
        hurry = undefined;
        resolve();
      };
      let wait = timer.schedule(done, ms);
      let sleeping = ms;
      wake = () => {
        wait.cancel();
        done();
      };
      hurry = (sooner) => {
        if (sooner >= sleeping) return;
        wait.cancel();
        wait = timer.schedule(done, sooner);
        sleeping = sooner;
      };
    });
  };

  let gathering: { cancel(): void } | undefined;
  const recordFinished = (gathered = false) => {
    if (recording !== undefined || finished.length === 0) return;
    if (!gathered && !stopped && active > 0) {
      // Attempts still running are likely to end within moments (those of one claim end together):
      // waiting GROUP_MS records them in the same transaction rather than one commit each.
      gathering ??= timer.schedule(() => {
        gathering = undefined;
        recordFinished(true);
      }, GROUP_MS);
      return;
    }
    gathering?.cancel();
    gathering = undefined;
    const group = finished;
    finished = [];
    // The finished attempts gave their slots back: the recording claims their successors.
    const limit = stopped ? 0 : Math.max(0, room());
    claiming += limit;
    recording = deliveries
      .record(group, limit > 0 ? { limit, endpointIds: options.endpointIds } : undefined)
      .catch((error: unknown) => {
        // Their leases end and they come due again: sent twice, never lost.
        log.error(
          { err: error, deliveries: group.length },
          'recording webhook outcomes failed; they will be sent again',
        );
        return undefined;
      })
      .then((claimed) => {
        claiming -= limit;
        recording = undefined;
        for (const delivery of claimed ?? []) start(delivery);
        // What finished meanwhile is recorded next, and that recording claims in turn.
        if (finished.length > 0) return recordFinished();
        if (claimed === undefined) return poke();
        if (claimed.length > 0) foundSinceLook = true;
        // A full claim may have left more due, and the loop waiting for a slot has one now: it looks
        // at once. Fewer than asked for: what is due is in hand, and the loop looks for what comes
        // next as after any look that found something.
        if (claimed.length === limit || waitingForSlot) poke();
        else if (claimed.length > 0) hurry?.(busyPollMs);
      });
  };

  const start = (delivery: ClaimedDelivery) => {
    active += 1;
    let holding = true;
    const release = () => {
      if (!holding) return false;
      holding = false;
      active -= 1;
      return true;
    };
    // A slow attempt's slot goes to the loop; a finished one's to the recording of its outcome.
    const slow = timer.schedule(() => {
      if (release()) poke();
    }, options.slowMs);
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
      const limit = room();
      if (limit <= 0) {
        // Full: a slot freed (or a recording that claimed fewer than it set aside) wakes this.
        waitingForSlot = true;
        await sleep(options.pollMs);
        waitingForSlot = false;
        continue;
      }
      claiming += limit;
      const claimed = await deliveries.claim(limit, options.endpointIds).catch((error: unknown) => {
        log.error({ err: error }, 'claiming webhook deliveries failed; will retry');
        return undefined;
      });
      claiming -= limit;
      if (claimed === undefined) {
        sleepMs = options.pollMs;
        await sleep(sleepMs);
        continue;
      }
      // Claimed as stop() came, they are sent all the same, rather than left to wait out their lease.
      for (const delivery of claimed) start(delivery);
      if (stopped) break;
      // A full claim may have left more due: look again as soon as a slot is free.
      if (claimed.length === limit) {
        sleepMs = busyPollMs;
        continue;
      }
      // Work found by this look or by a recording's claim since the last: events are flowing.
      sleepMs = claimed.length > 0 || foundSinceLook ? busyPollMs : Math.min(sleepMs * 2, options.pollMs);
      foundSinceLook = false;
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
