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
      lanes.run('a', async () => {
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
    // A newcomer of the same tenant while all lanes are taken waits behind those already waiting.
    const late = lanes.run('a', async () => {
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

  it("lets a tenant's piece run after at most one turn of each tenant already waiting", async () => {
    const lanes = new Lanes(1);
    const order: string[] = [];
    const gate = (() => {
      let open!: () => void;
      const opened = new Promise<void>((resolve) => (open = resolve));
      return { open, opened };
    })();
    const piece = (tenant: string, name: string, wait?: Promise<void>) =>
      lanes.run(tenant, async () => {
        order.push(name);
        await wait;
      });
    // Tenant a holds the only lane and queues a hundred more pieces, then b and c ask for one each.
    const all = [piece('a', 'a0', gate.opened)];
    for (let i = 1; i <= 100; i += 1) all.push(piece('a', `a${i}`));
    all.push(piece('b', 'b0'), piece('c', 'c0'), piece('b', 'b1'));
    gate.open();
    await Promise.all(all);
    expect(order.slice(0, 7)).toEqual(['a0', 'a1', 'b0', 'c0', 'a2', 'b1', 'a3']);
    expect(order.slice(7)).toEqual(Array.from({ length: 97 }, (_, i) => `a${i + 4}`));
  });

  it('frees the lane of work that fails', async () => {
    const lanes = new Lanes(1);
    await expect(lanes.run('a', async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await lanes.run('a', async () => 'next')).toBe('next');
  });

  it('fails a piece that gets no lane within the wait, skips it when its turn comes, and runs the rest', async () => {
    const lanes = new Lanes(1, { ms: 30, tooLong: () => new Error('waited too long') });
    let release!: () => void;
    const holder = lanes.run('a', () => new Promise<string>((resolve) => (release = () => resolve('held'))));
    const ran: string[] = [];
    const starved = lanes.run('b', async () => void ran.push('b'));
    await expect(starved).rejects.toThrow('waited too long');
    // Queued after the one that gave up: its turn comes next, and the lane is not lost to the skip.
    const after = lanes.run('c', async () => 'ran');
    release();
    expect(await holder).toBe('held');
    expect(await after).toBe('ran');
    await Promise.all([
      lanes.run('d', async () => void ran.push('d')),
      lanes.run('e', async () => void ran.push('e')),
    ]);
    expect(ran).toEqual(['d', 'e']);
  });
});
