/**
 * When each machine of the fleet heartbeats next: a binary heap of machine numbers ordered by
 * their due time (ms on performance.now()'s clock). 50,000 machines at 1,667 beats a second cost
 * the load generator a few microseconds a beat here, where a scan of every machine per tick would
 * cost it milliseconds.
 */
export class BeatSchedule {
  private readonly heap: number[] = [];
  private readonly due: number[] = [];

  get size(): number {
    return this.heap.length;
  }

  add(machine: number, at: number): void {
    this.due[machine] = at;
    this.heap.push(machine);
    this.up(this.heap.length - 1);
  }

  /** The machine due first if it is due by `now` (taken off the heap), with when it was due. */
  takeDue(now: number): { machine: number; at: number } | undefined {
    const first = this.heap[0];
    if (first === undefined || this.dueOf(first) > now) return undefined;
    const last = this.heap.pop() as number;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.down(0);
    }
    return { machine: first, at: this.dueOf(first) };
  }

  private dueOf(machine: number): number {
    return this.due[machine] as number;
  }

  private at(i: number): number {
    return this.dueOf(this.heap[i] as number);
  }

  private swap(i: number, j: number): void {
    const a = this.heap[i] as number;
    this.heap[i] = this.heap[j] as number;
    this.heap[j] = a;
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.at(parent) <= this.at(i)) return;
      this.swap(i, parent);
      i = parent;
    }
  }

  private down(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let least = i;
      if (left < n && this.at(left) < this.at(least)) least = left;
      if (right < n && this.at(right) < this.at(least)) least = right;
      if (least === i) return;
      this.swap(i, least);
      i = least;
    }
  }
}
