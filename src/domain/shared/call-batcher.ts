/**
 * Runs many small requests as few statements: a run starts on the turn of the event loop after
 * its requests arrived, with every request that arrived in that turn (HTTP requests that came in
 * together), and a request that arrives while `maxInFlight` runs are busy waits for the next run
 * with every other request that arrived meanwhile. Nothing waits on a timer; under load a run
 * carries as many requests as arrived during the previous one (group commit, before the database).
 */
export class CallBatcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    /** Answers every item, in the order given; a throw fails the whole run. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      // Waiting one turn lets requests that came in together share a run. On the embedded
      // database, which works on this thread and blocks it, it is the only chance they get.
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    });
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.maxBatch);
      this.inFlight += 1;
      void this.execute(batch).finally(() => {
        this.inFlight -= 1;
        this.pump();
      });
    }
  }

  private async execute(batch: typeof this.queue): Promise<void> {
    try {
      const answers = await this.run(batch.map((b) => b.item));
      if (answers.length !== batch.length) {
        throw new Error(`a batch of ${batch.length} got ${answers.length} answers`);
      }
      batch.forEach((b, i) => b.resolve(answers[i] as O));
    } catch (error) {
      for (const b of batch) b.reject(error);
    }
  }
}
