import type { FastifyBaseLogger } from 'fastify';
import { describe, expect, it } from 'vitest';
import { BUSY_POLL_MS, startWebhookWorker, type WorkerTimer } from '../../src/jobs/webhook-worker.js';

const POLL_MS = 1000;
const BATCH = 8;

/** A timer that only records what the worker asks for; the test fires each wait by hand. */
function manualTimer() {
  const waits: Array<{ ms: number; fire: () => void; cancelled: boolean }> = [];
  const timer: WorkerTimer = {
    schedule(callback, ms) {
      const wait = { ms, fire: callback, cancelled: false };
      waits.push(wait);
      return { cancel: () => void (wait.cancelled = true) };
    },
  };
  return { timer, waits };
}

/** deliverDue answering each look from a script (then 0), counting the looks. */
function scripted(script: Array<number | Error>) {
  const answers = [...script];
  let looks = 0;
  return {
    get looks() {
      return looks;
    },
    async deliverDue(limit?: number) {
      expect(limit).toBe(BATCH);
      looks += 1;
      const next = answers.shift() ?? 0;
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

const errors: unknown[] = [];
const log = { error: (o: unknown) => errors.push(o) } as unknown as FastifyBaseLogger;
const settle = () => new Promise((resolve) => setImmediate(resolve));

function start(script: Array<number | Error>) {
  const deliveries = scripted(script);
  const { timer, waits } = manualTimer();
  const worker = startWebhookWorker(deliveries, log, { pollMs: POLL_MS, batch: BATCH, timer });
  /** Fires the latest wait and lets the drain it starts run to its next wait. */
  const wake = async () => {
    waits.at(-1)?.fire();
    await settle();
  };
  return { deliveries, waits, worker, wake };
}

describe('webhook worker', () => {
  it('looks again at once while a look finds anything, even a batch short of full', async () => {
    // A short batch used to end the drain: what committed while it was sent waited a poll interval.
    const { deliveries, waits, worker } = start([BATCH, 3, 1, 0]);
    await settle();
    expect(deliveries.looks).toBe(4);
    expect(waits.map((w) => w.ms)).toEqual([BUSY_POLL_MS]);
    await worker.stop();
  });

  it('after sending, looks again soon, doubling the wait at each empty look up to the poll interval', async () => {
    const { deliveries, waits, worker, wake } = start([2, 0]);
    await settle();
    for (let i = 0; i < 6; i += 1) await wake();
    expect(deliveries.looks).toBe(2 + 6);
    expect(waits.map((w) => w.ms)).toEqual([50, 100, 200, 400, 800, POLL_MS, POLL_MS]);
    await worker.stop();
  });

  it('goes back to looking soon as soon as a look finds something again', async () => {
    const { waits, worker, wake } = start([1, 0, 0, 0, 5, 0]);
    await settle();
    await wake();
    await wake();
    expect(waits.map((w) => w.ms)).toEqual([50, 100, 200]);
    await wake();
    expect(waits.map((w) => w.ms)).toEqual([50, 100, 200, 50]);
    await worker.stop();
  });

  it('an idle worker looks once per poll interval', async () => {
    const { deliveries, waits, worker, wake } = start([]);
    await settle();
    await wake();
    await wake();
    expect(deliveries.looks).toBe(3);
    expect(waits.map((w) => w.ms)).toEqual([POLL_MS, POLL_MS, POLL_MS]);
    await worker.stop();
  });

  it('logs a fault and waits the whole poll interval before trying again', async () => {
    errors.length = 0;
    const { deliveries, waits, worker, wake } = start([4, new Error('database away'), 2, 0]);
    await settle();
    expect(deliveries.looks).toBe(2);
    expect(errors).toHaveLength(1);
    expect(waits.map((w) => w.ms)).toEqual([POLL_MS]);
    await wake();
    expect(deliveries.looks).toBe(4);
    expect(waits.map((w) => w.ms)).toEqual([POLL_MS, BUSY_POLL_MS]);
    await worker.stop();
  });

  it('stops: the wait in hand is cancelled and no look follows', async () => {
    const { deliveries, waits, worker } = start([1, 0]);
    await settle();
    await worker.stop();
    expect(waits.map((w) => w.cancelled)).toEqual([true]);
    waits.at(-1)?.fire();
    await settle();
    expect(deliveries.looks).toBe(2);
  });
});
