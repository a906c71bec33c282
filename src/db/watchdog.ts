import pg from 'pg';

/** What node-postgres keeps of a client's socket: the one handle that ends a call to a silent peer. */
interface Severable {
  connection?: { stream?: { destroy(error?: Error): void } };
}

/** Ends a client's connection at once, failing the query it waits on, whatever the peer does. */
function sever(client: pg.ClientBase): void {
  (client as unknown as Severable).connection?.stream?.destroy();
}

const isThenable = (value: unknown): value is PromiseLike<unknown> =>
  typeof (value as { then?: unknown } | null)?.then === 'function';

/**
 * Watches PostgreSQL from a connection of its own, apart from the request pool, so that a busy pool
 * never reads as a database that does not answer, and a silent database (a partition, a host gone
 * without closing its connections) is noticed within `silenceMs`.
 *
 * The server bounds each statement (statement_timeout), but only the statements it receives; and a
 * client-side deadline per query would also cut what may run long on purpose (a backup's sums, a
 * migration waiting for another instance's lock). So a query is never judged by its own age: when
 * one has waited a fifth of `silenceMs`, this connection asks `select 1`, and only when that goes
 * unanswered for three fifths more is the database taken for silent: every call waiting on it is
 * cut (it answers "500" at once, and its connection leaves the pool). A long query on a database
 * that answers goes on.
 */
export class DatabaseWatchdog {
  private readonly queries = new Map<pg.ClientBase, number>();
  private readonly tickMs: number;
  private readonly pingTimeoutMs: number;
  private readonly timer: NodeJS.Timeout;
  private probe: pg.Client | undefined;
  private pinging: Promise<boolean> | undefined;
  /** Why the last ping failed, for the log of /readyz. */
  lastFailure: unknown;

  constructor(
    private readonly config: pg.ClientConfig,
    silenceMs: number,
  ) {
    this.tickMs = Math.max(1, Math.floor(silenceMs / 5));
    this.pingTimeoutMs = Math.max(1, silenceMs - 2 * this.tickMs);
    this.timer = setInterval(() => this.tick(), this.tickMs);
    this.timer.unref();
  }

  /** Keeps the start of each query `client` sends, until it settles. */
  watch(client: pg.ClientBase): void {
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    const watched = (...args: unknown[]): unknown => {
      const result = query(...args);
      // A cursor (not used here) is not a promise: left unwatched.
      if (!isThenable(result)) return result;
      const since = performance.now();
      this.queries.set(client, since);
      const settle = () => {
        if (this.queries.get(client) === since) this.queries.delete(client);
      };
      result.then(settle, settle);
      return result;
    };
    Object.assign(client, { query: watched });
  }

  /** Whether the database answers `select 1` within the silence bound; one ping at a time. */
  answers(): Promise<boolean> {
    this.pinging ??= this.ping().finally(() => {
      this.pinging = undefined;
    });
    return this.pinging;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    const probe = this.probe;
    this.probe = undefined;
    if (probe === undefined) return;
    // A silent database never acknowledges the goodbye: not waited for past the ping's bound.
    const ended = probe.end().catch(() => undefined);
    const late = setTimeout(() => sever(probe), this.pingTimeoutMs);
    await ended;
    clearTimeout(late);
  }

  private tick(): void {
    if (this.pinging !== undefined) return;
    const now = performance.now();
    for (const since of this.queries.values()) {
      if (now - since >= this.tickMs) {
        void this.answers();
        return;
      }
    }
  }

  private async ping(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const silent = new Promise<'silent'>((resolve) => {
      timer = setTimeout(() => resolve('silent'), this.pingTimeoutMs);
    });
    let failure: unknown;
    const attempt = this.selectOne().then(
      () => 'answered' as const,
      (error: unknown) => {
        failure = error;
        return 'failed' as const;
      },
    );
    const outcome = await Promise.race([attempt, silent]);
    clearTimeout(timer);
    if (outcome === 'answered') return true;
    this.dropProbe();
    if (outcome === 'failed') {
      this.lastFailure = failure;
      return false;
    }
    this.lastFailure = new Error(`the database did not answer within ${this.pingTimeoutMs} ms`);
    // Refused or broken connections fail their calls by themselves; silence never does.
    for (const client of this.queries.keys()) sever(client);
    return false;
  }

  private async selectOne(): Promise<void> {
    let probe = this.probe;
    if (probe === undefined) {
      probe = new pg.Client(this.config);
      // Its failures are the ping's; unheard, an error event would end the process.
      probe.on('error', () => this.dropProbe(probe));
      probe.on('end', () => this.dropProbe(probe));
      this.probe = probe;
      await probe.connect();
    }
    await probe.query('select 1');
  }

  private dropProbe(which: pg.Client | undefined = this.probe): void {
    if (which === undefined || which !== this.probe) return;
    this.probe = undefined;
    sever(which);
  }
}
