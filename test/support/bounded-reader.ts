import { Worker } from 'node:worker_threads';

/** How a backup's opening ended: opened, refused with a message, or not within the bound. */
export type Outcome = { ok: true } | { ok: false; message: string } | { timedOut: true };

/** The bound every input must end within; generous for files of a few hundred bytes. */
export const BOUND_MS = 1000;
/** A worker's first start loads the reader through tsx: not part of any one input's time. */
const START_MS = 60_000;

interface Reply {
  id?: number;
  ok?: boolean;
  message?: string;
  ready?: boolean;
}

/**
 * openBackup in a worker thread, each call raced against BOUND_MS. A reader that spins without
 * yielding never lets a timer of its own thread fire; here the test's thread stays free, ends the
 * worker when the timer wins, and starts a new one for the next input.
 */
export class BoundedReader {
  private worker: Worker | undefined;
  private ready: Promise<Worker> | undefined;
  private next = 0;

  private start(): Promise<Worker> {
    this.ready ??= new Promise((resolve, reject) => {
      const worker = new Worker(new URL('./backup-reader-worker.mjs', import.meta.url));
      const timer = setTimeout(() => reject(new Error('the reader worker did not start')), START_MS);
      worker.once('error', reject);
      worker.once('message', (reply: Reply) => {
        clearTimeout(timer);
        if (reply.ready === true) resolve(worker);
        else reject(new Error('the reader worker said something before it was ready'));
      });
      this.worker = worker;
    });
    return this.ready;
  }

  async open(file: string, scratch: string, passphrase?: string): Promise<Outcome> {
    const worker = await this.start();
    const id = (this.next += 1);
    let timer: NodeJS.Timeout | undefined;
    let onMessage: ((reply: Reply) => void) | undefined;
    const answered = new Promise<Outcome>((resolve) => {
      onMessage = (reply) => {
        if (reply.id !== id) return;
        resolve(reply.ok === true ? { ok: true } : { ok: false, message: reply.message ?? '' });
      };
      worker.on('message', onMessage);
      worker.postMessage({ id, file, passphrase, scratch });
    });
    const late = new Promise<Outcome>((resolve) => {
      timer = setTimeout(() => resolve({ timedOut: true }), BOUND_MS);
    });
    const outcome = await Promise.race([answered, late]);
    clearTimeout(timer);
    if (onMessage !== undefined) worker.off('message', onMessage);
    if ('timedOut' in outcome) await this.close();
    return outcome;
  }

  /** Ends the worker (a spinning one too): the next call starts another. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    this.ready = undefined;
    await worker?.terminate();
  }
}
