import { describe, expect, it } from 'vitest';
import { CallBatcher } from '../../src/domain/shared/call-batcher.js';

/** A run the test finishes by hand, recording the items of each run. */
function controlledRuns() {
  const runs: Array<{ items: number[]; finish: () => void; fail: (e: Error) => void }> = [];
  const run = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      runs.push({ items, finish: () => resolve(items.map((i) => i * 10)), fail: reject });
    });
  return { runs, run };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('CallBatcher', () => {
  it('runs the requests of one turn together, and gathers those that arrive meanwhile into the next run', async () => {
    const { runs, run } = controlledRuns();
    const batcher = new CallBatcher(run, 1, 100);
    const first = [batcher.submit(1), batcher.submit(2)];
    expect(runs).toHaveLength(0);
    await tick();
    expect(runs.map((r) => r.items)).toEqual([[1, 2]]);
    const later = [3, 4, 5].map((i) => batcher.submit(i));
    await tick();
    expect(runs).toHaveLength(1);
    runs[0]?.finish();
    expect(await Promise.all(first)).toEqual([10, 20]);
    await tick();
    expect(runs.map((r) => r.items)).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
    runs[1]?.finish();
    expect(await Promise.all(later)).toEqual([30, 40, 50]);
  });

  it('keeps up to maxInFlight runs going and caps each run at maxBatch', async () => {
    const { runs, run } = controlledRuns();
    const batcher = new CallBatcher(run, 2, 2);
    const answers = [1, 2, 3, 4, 5, 6, 7].map((i) => batcher.submit(i));
    await tick();
    expect(runs.map((r) => r.items)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    runs[1]?.finish();
    await tick();
    expect(runs.map((r) => r.items)).toEqual([
      [1, 2],
      [3, 4],
      [5, 6],
    ]);
    runs[0]?.finish();
    await tick();
    expect(runs.map((r) => r.items)).toEqual([[1, 2], [3, 4], [5, 6], [7]]);
    runs[2]?.finish();
    runs[3]?.finish();
    expect(await Promise.all(answers)).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it('fails every request of a failed run, and only those', async () => {
    const { runs, run } = controlledRuns();
    const batcher = new CallBatcher(run, 1, 100);
    const first = batcher.submit(1);
    await tick();
    const second = [batcher.submit(2), batcher.submit(3)];
    await tick();
    runs[0]?.fail(new Error('database gone'));
    await expect(first).rejects.toThrow('database gone');
    await tick();
    expect(runs[1]?.items).toEqual([2, 3]);
    runs[1]?.finish();
    expect(await Promise.all(second)).toEqual([20, 30]);
  });

  it('refuses a run that answers a different number of requests', async () => {
    const batcher = new CallBatcher(async (items: number[]) => items.slice(1), 1, 100);
    await expect(batcher.submit(1)).rejects.toThrow('a batch of 1 got 0 answers');
  });
});
