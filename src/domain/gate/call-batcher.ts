/**
 * Runs many small requests as few statements: a request that arrives while `maxInFlight` runs are
 * busy waits for the next run and goes in it with every other request that arrived meanwhile. An
 * idle batcher runs a request at once, so nothing waits on a timer; under load a run carries as
 * many requests as arrived during the previous one (group commit, done before the database).
 */
export class CallBatcher<I, O> {
  private queue: Array<{ item: I; resolve: (value: O) => void; reject: (error: unknown) => void }> = [];
  private inFlight = 0;

  constructor(
    /** Answers every item, in the order given; a throw fails the whole run. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxInFlight: number,
    private readonly maxBatch: number,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.pump();
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
