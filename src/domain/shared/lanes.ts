/**
 * At most `size` pieces of work at once. The rest wait, each tenant in its own line, and the
 * tenants take turns: a freed lane goes to the first piece of the tenant next in the rotation, which
 * then moves to the back. A tenant with a thousand pieces waiting delays another tenant's piece by
 * at most one of its own per lane, not by all thousand.
 */
export class Lanes {
  private running = 0;
  /** Waiting pieces by tenant, in the order the tenants take their turns. */
  private readonly waiting = new Map<string, Array<() => void>>();

  constructor(private readonly size: number) {}

  async run<T>(tenant: string, work: () => Promise<T>): Promise<T> {
    // A finishing piece hands its lane straight to the next in line, so none is ever over-booked.
    if (this.running >= this.size) await new Promise<void>((resolve) => this.enqueue(tenant, resolve));
    else this.running += 1;
    try {
      return await work();
    } finally {
      this.handOn();
    }
  }

  private enqueue(tenant: string, start: () => void): void {
    const line = this.waiting.get(tenant);
    if (line) line.push(start);
    else this.waiting.set(tenant, [start]);
  }

  private handOn(): void {
    const next = this.waiting.entries().next();
    if (next.done) {
      this.running -= 1;
      return;
    }
    const [tenant, line] = next.value;
    const start = line.shift() as () => void;
    // To the back of the rotation, or out of it when its line is empty.
    this.waiting.delete(tenant);
    if (line.length > 0) this.waiting.set(tenant, line);
    start();
  }
}
