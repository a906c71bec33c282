import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import type { ClaimedDelivery } from '../../src/domain/webhooks/deliveries.repository.js';
import type { Attempted, NextClaim } from '../../src/domain/webhooks/delivery.service.js';
import {
  BUSY_POLL_MS,
  GROUP_MS,
  startWebhookWorker,
  type WorkerTimer,
} from '../../src/jobs/webhook-worker.js';

const POLL_MS = 1000;
const SLOW_MS = 700;

/** A timer that only records what the worker asks for; the test fires each wait by hand. */
function manualTimer() {
  const waits: Array<{ ms: number; fire: () => void; cancelled: boolean; fired: boolean }> = [];
  const timer: WorkerTimer = {
    schedule(callback, ms) {
      const wait = { ms, fire: () => undefined, cancelled: false, fired: false };
      wait.fire = () => {
        if (wait.cancelled || wait.fired) return;
        wait.fired = true;
        callback();
      };
      waits.push(wait);
      return { cancel: () => void (wait.cancelled = true) };
    },
  };
  /** The worker's sleeps between looks (the slow-attempt and gathering timers have their own lengths). */
  const sleeps = () => waits.filter((w) => w.ms !== SLOW_MS && w.ms !== GROUP_MS);
  /** Ends the gathering waits: finished attempts go to be recorded. */
  const gathered = async () => {
    await settle();
    for (const w of waits.filter((x) => x.ms === GROUP_MS)) w.fire();
    await settle();
  };
  return { timer, waits, sleeps, gathered };
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const delivery = (id: number) => ({ id }) as ClaimedDelivery;

/**
 * A delivery service whose claims (the loop's, and those a recording makes) answer from a script
 * (each entry: the ids of one claim, or an error; then nothing), whose attempts finish when the test
 * says, and whose recordings are kept.
 */
function scripted(script: Array<number[] | Error>) {
  const answers = [...script];
  const claims: Array<{ by: 'loop' | 'recording'; limit: number }> = [];
  const attempts = new Map<number, Deferred<Attempted>>();
  const recorded: number[][] = [];
  let recording: Deferred<void> | undefined;
  let failNextRecording = false;
  const answer = (by: 'loop' | 'recording', limit: number) => {
    claims.push({ by, limit });
    const next = answers.shift() ?? [];
    if (next instanceof Error) throw next;
    return next.slice(0, limit).map(delivery);
  };
  return {
    claims,
    recorded,
    started: () => [...attempts.keys()],
    /** Holds the next recording until the answered function is called. */
    holdRecording() {
      const held = deferred<void>();
      recording = held;
      return () => held.resolve();
    },
    failRecording() {
      failNextRecording = true;
    },
    finish(id: number, ok = true) {
      attempts.get(id)?.resolve({
        delivery: delivery(id),
        at: new Date(),
        done: new Date(),
        result: { ok, statusCode: ok ? 204 : null, latencyMs: 1, responseExcerpt: null, error: null },
      });
    },
    deliveries: {
      async claim(limit: number) {
        return answer('loop', limit);
      },
      attempt(d: ClaimedDelivery) {
        const attempt = deferred<Attempted>();
        attempts.set(d.id, attempt);
        return attempt.promise;
      },
      async record(group: readonly Attempted[], next?: NextClaim) {
        recorded.push(group.map((a) => a.delivery.id));
        const held = recording;
        recording = undefined;
        await held?.promise;
        if (failNextRecording) {
          failNextRecording = false;
          throw new Error('database away');
        }
        return next === undefined ? [] : answer('recording', next.limit);
      },
    },
  };
}

const errors: unknown[] = [];
const log = { error: (o: unknown) => errors.push(o) } as unknown as FastifyBaseLogger;
async function settle() {
  for (let i = 0; i < 10; i += 1) await new Promise((resolve) => setImmediate(resolve));
}

function start(script: Array<number[] | Error>, slots = 4, maxOpen?: number) {
  const service = scripted(script);
  const { timer, waits, sleeps, gathered } = manualTimer();
  const worker = startWebhookWorker(service.deliveries, log, {
    pollMs: POLL_MS,
    slots,
    slowMs: SLOW_MS,
    timer,
    ...(maxOpen === undefined ? {} : { maxOpen }),
  });
  /** Fires the latest sleep and lets the look it starts run to its next sleep. */
  const wake = async () => {
    sleeps().at(-1)?.fire();
    await settle();
  };
  return { service, waits, sleeps, gathered, worker, wake };
}

describe('webhook worker', () => {
  it('starts the next delivery as soon as a slot frees, not when the slowest of its group ends', async () => {
    const { service, worker, gathered } = start([[1, 2], [3], [4]], 2);
    await settle();
    expect(service.started()).toEqual([1, 2]);
    service.finish(1);
    await gathered();
    // 2 is still in flight: 1's recording claims one delivery for the free slot.
    expect(service.recorded).toEqual([[1]]);
    expect(service.claims).toEqual([
      { by: 'loop', limit: 2 },
      { by: 'recording', limit: 1 },
    ]);
    expect(service.started()).toEqual([1, 2, 3]);
    service.finish(3);
    await gathered();
    expect(service.started()).toEqual([1, 2, 3, 4]);
    for (const id of [2, 4]) service.finish(id);
    await worker.stop();
    expect(service.recorded.flat().sort()).toEqual([1, 2, 3, 4]);
  });

  it('records attempts that end together in one group, and what ends during a recording in the next', async () => {
    const { service, worker, gathered } = start([[1, 2, 3, 4, 5]], 8);
    await settle();
    // 1 and 2 end while others run: they wait a moment for company, and 3 joins them.
    service.finish(1);
    service.finish(2);
    await settle();
    expect(service.recorded).toEqual([]);
    service.finish(3);
    await gathered();
    expect(service.recorded).toEqual([[1, 2, 3]]);
    // 4 ends during a recording: it goes in the next one.
    const release = service.holdRecording();
    service.finish(4);
    await gathered();
    service.finish(5);
    await settle();
    expect(service.recorded).toEqual([[1, 2, 3], [4]]);
    release();
    await settle();
    // Nothing runs any more: recorded at once, without waiting for company.
    expect(service.recorded).toEqual([[1, 2, 3], [4], [5]]);
    await worker.stop();
  });

  it('gives a slow attempt’s slot back, keeping it open, up to the bound on open attempts', async () => {
    const { service, waits, worker, gathered } = start([[1, 2], [3, 4], [5, 6], [7]], 2, 5);
    await settle();
    expect(service.started()).toEqual([1, 2]);
    // 1 and 2 run past the slow mark: their slots go to 3 and 4.
    for (const w of waits.filter((x) => x.ms === SLOW_MS)) w.fire();
    await settle();
    expect(service.started()).toEqual([1, 2, 3, 4]);
    // Slow again: only one more may open (five at most).
    for (const w of waits.filter((x) => x.ms === SLOW_MS)) w.fire();
    await settle();
    expect(service.claims.map((c) => c.limit)).toEqual([2, 2, 1]);
    expect(service.started()).toEqual([1, 2, 3, 4, 5]);
    // One answers: its recording claims one more.
    service.finish(1);
    await gathered();
    expect(service.claims.at(-1)).toEqual({ by: 'recording', limit: 1 });
    expect(service.started()).toEqual([1, 2, 3, 4, 5, 7]);
    for (const id of [2, 3, 4, 5, 7]) service.finish(id);
    await worker.stop();
    expect(service.recorded.flat().sort()).toEqual([1, 2, 3, 4, 5, 7]);
  });

  it('after sending, looks again soon, doubling the wait at each empty look up to the poll interval', async () => {
    const { service, sleeps, worker, wake } = start([[1]]);
    await settle();
    for (let i = 0; i < 6; i += 1) await wake();
    expect(service.claims).toHaveLength(7);
    expect(sleeps().map((w) => w.ms)).toEqual([50, 100, 200, 400, 800, POLL_MS, POLL_MS]);
    service.finish(1);
    await worker.stop();
  });

  it('goes back to looking soon as soon as a look finds something again', async () => {
    const { service, sleeps, worker, wake } = start([[1], [], [], [2]]);
    await settle();
    await wake();
    await wake();
    expect(sleeps().map((w) => w.ms)).toEqual([BUSY_POLL_MS, 100, 200]);
    await wake();
    expect(sleeps().map((w) => w.ms)).toEqual([BUSY_POLL_MS, 100, 200, BUSY_POLL_MS]);
    service.finish(1);
    service.finish(2);
    await worker.stop();
  });

  it('looks again soon when a recording’s claim found work, cutting a longer wait short', async () => {
    const { service, sleeps, worker, wake } = start([[1], [], [], [2]]);
    await settle();
    await wake();
    await wake();
    expect(sleeps().map((w) => [w.ms, w.cancelled])).toEqual([
      [BUSY_POLL_MS, false],
      [100, false],
      [200, false],
    ]);
    // 1's recording claims 2: the 200 ms wait becomes 50.
    service.finish(1);
    await settle();
    expect(service.claims.at(-1)).toEqual({ by: 'recording', limit: 4 });
    expect(service.started()).toEqual([1, 2]);
    expect(sleeps().map((w) => [w.ms, w.cancelled])).toEqual([
      [BUSY_POLL_MS, false],
      [100, false],
      [200, true],
      [BUSY_POLL_MS, false],
    ]);
    service.finish(2);
    await worker.stop();
  });

  it('an idle worker looks once per poll interval', async () => {
    const { service, sleeps, worker, wake } = start([]);
    await settle();
    await wake();
    await wake();
    expect(service.claims).toHaveLength(3);
    expect(sleeps().map((w) => w.ms)).toEqual([POLL_MS, POLL_MS, POLL_MS]);
    await worker.stop();
  });

  it('logs a fault and waits the whole poll interval before trying again', async () => {
    errors.length = 0;
    const { service, sleeps, worker, wake } = start([new Error('database away'), [1]]);
    await settle();
    expect(service.claims).toHaveLength(1);
    expect(errors).toHaveLength(1);
    expect(sleeps().map((w) => w.ms)).toEqual([POLL_MS]);
    await wake();
    expect(service.started()).toEqual([1]);
    service.finish(1);
    await worker.stop();
  });

  it('logs a recording that failed (its deliveries come due again) and goes on', async () => {
    errors.length = 0;
    const { service, worker, wake } = start([[1], [], [2]]);
    await settle();
    service.failRecording();
    service.finish(1);
    await settle();
    expect(errors).toHaveLength(1);
    await wake();
    expect(service.started()).toEqual([1, 2]);
    service.finish(2);
    await worker.stop();
    expect(service.recorded).toEqual([[1], [2]]);
  });

  it('stops: the wait in hand is cancelled, no look follows, and what was in flight is recorded', async () => {
    const { service, sleeps, worker } = start([[1, 2]]);
    await settle();
    service.finish(1);
    const stopping = worker.stop();
    await settle();
    service.finish(2);
    await stopping;
    expect(sleeps().every((w) => w.cancelled || w.fired)).toBe(true);
    const looks = service.claims.length;
    sleeps().at(-1)?.fire();
    await settle();
    expect(service.claims).toHaveLength(looks);
    expect(service.recorded.flat().sort()).toEqual([1, 2]);
  });
});
