import { describe, expect, it } from 'vitest';
import { Lanes } from '../../src/domain/shared/lanes.js';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Lanes', () => {
  it('runs at most `size` pieces of work at once, the others in the order they came', async () => {
    const lanes = new Lanes(2);
    const started: number[] = [];
    const finishers = new Map<number, () => void>();
    let running = 0;
    let most = 0;
    const pieces = [1, 2, 3, 4, 5].map((n) =>
      lanes.run(async () => {
        started.push(n);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => finishers.set(n, resolve));
        running -= 1;
        return n * 10;
      }),
    );
    await tick();
    expect(started).toEqual([1, 2]);
    finishers.get(2)?.();
    await tick();
    expect(started).toEqual([1, 2, 3]);
    // A newcomer while all lanes are taken waits behind those already waiting.
    const late = lanes.run(async () => {
      started.push(6);
      return 60;
    });
    finishers.get(1)?.();
    finishers.get(3)?.();
    await tick();
    expect(started).toEqual([1, 2, 3, 4, 5]);
    finishers.get(4)?.();
    finishers.get(5)?.();
    expect(await Promise.all([...pieces, late])).toEqual([10, 20, 30, 40, 50, 60]);
    expect(started).toEqual([1, 2, 3, 4, 5, 6]);
    expect(most).toBe(2);
  });

  it('frees the lane of work that fails', async () => {
    const lanes = new Lanes(1);
    await expect(lanes.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lanes.run(async () => 'next')).toBe('next');
  });
});
