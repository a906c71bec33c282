/** A bound on how long a piece may wait for a lane, and what it fails with when it waited that long. */
export interface LaneWait {
  ms: number;
  tooLong: () => Error;
}

interface Waiting {
  start: () => void;
  /** Set once the piece gave up waiting: it is skipped when its turn comes. */
  gaveUp: boolean;
}

/**
 * At most `size` pieces of work at once. The rest wait, each tenant in its own line, and the
 * tenants take turns: a freed lane goes to the first piece of the tenant next in the rotation, which
 * then moves to the back. A tenant with a thousand pieces waiting delays another tenant's piece by
 * at most one of its own per lane, not by all thousand. With a `wait`, a piece that gets no lane
 * within it fails and leaves its line.
 */
export class Lanes {
  private running = 0;
  /** Waiting pieces by tenant, in the order the tenants take their turns. */
  private readonly waiting = new Map<string, Waiting[]>();

  constructor(
    private readonly size: number,
    private readonly wait?: LaneWait,
  ) {}

  async run<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    // A finishing piece hands its lane straight to the next in line, so none is ever over-booked.
    if (this.running >= this.size) await this.queue(tenant);
    else this.running += 1;
    try {
      return await work();
    } finally {
      this.handOn();
    }
  }

  private queue(tenant: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting = { start: resolve, gaveUp: false };
      const line = this.waiting.get(tenant);
      if (line) line.push(entry);
      else this.waiting.set(tenant, [entry]);
      if (this.wait === undefined) return;
      const { ms, tooLong } = this.wait;
      const timer = setTimeout(() => {
        entry.gaveUp = true;
        reject(tooLong());
      }, ms);
      timer.unref();
      entry.start = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private handOn(): void {
    for (;;) {
      const next = this.waiting.entries().next();
      if (next.done) {
        this.running -= 1;
        return;
      }
      const [tenant, line] = next.value;
      const entry = line.shift() as Waiting;
      // To the back of the rotation, or out of it when its line is empty.
      this.waiting.delete(tenant);
      if (line.length > 0) this.waiting.set(tenant, line);
      if (!entry.gaveUp) {
        entry.start();
        return;
      }
    }
  }
}
