import pg from 'pg';

// Where the bench database's connections spend their time: pg_stat_activity sampled every
// SAMPLE_MS, each client backend counted under its state, what it waits on and the statement it
// runs (or ran last, while idle in a transaction). A pool whose every connection is busy makes
// calls wait for one inside the server, which PostgreSQL's CPU does not show.

const SAMPLE_MS = 100;

/** The bench's own connections (this watch, the meter), left out of what is watched. */
export const BENCH_APPLICATION = 'keyward-bench-meter';

/**
 * The fleet's instance names its connections so (PGAPPNAME): its pool is told apart from the
 * run's idle instance's and the bench's own.
 */
export const FLEET_APPLICATION = 'keyward-bench-fleet';

/** Statements told apart by what they touch; anything else by its first words. */
const LABELS: ReadonlyArray<[RegExp, string]> = [
  [/write_before/, 'heartbeat'],
  [/app_hash/, 'gate (token, rate limit)'],
  [/runtime_seat_slots/, 'seat slot'],
  [/insert into "?runtime_leases/i, 'lease insert'],
  [/usage_/, 'usage rollup'],
  [/^(begin|commit|rollback)/i, '$1'],
];

function label(query: string): string {
  const text = query.replace('/* prepared */', '').replace(/\s+/g, ' ').trim();
  for (const [pattern, name] of LABELS) {
    const match = pattern.exec(text);
    if (match !== null) return name.replace('$1', (match[1] ?? '').toLowerCase());
  }
  return text.slice(0, 40);
}

export class ConnectionWatch {
  private readonly seen = new Map<string, number>();
  private samples = 0;
  private timer: NodeJS.Timeout | undefined;
  private busy = false;

  private constructor(
    private readonly client: pg.Client,
    /** This watch's own backend, which PostgreSQL's CPU must not count. */
    readonly pid: number,
  ) {}

  static async open(url: string): Promise<ConnectionWatch> {
    const client = new pg.Client({ connectionString: url, application_name: BENCH_APPLICATION });
    await client.connect();
    const pid = await client.query<{ pid: number }>('select pg_backend_pid() as pid');
    return new ConnectionWatch(client, pid.rows[0]?.pid ?? 0);
  }

  /** Samples from now until `stop`, which answers the average connections in each state. */
  start(): void {
    this.seen.clear();
    this.samples = 0;
    this.timer = setInterval(() => void this.sample(), SAMPLE_MS);
  }

  stop(): Map<string, number> {
    clearInterval(this.timer);
    return new Map(
      [...this.seen].sort((a, b) => b[1] - a[1]).map(([key, n]) => [key, n / Math.max(1, this.samples)]),
    );
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.client.end();
  }

  private async sample(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const rows = await this.client.query<{
        app: string;
        state: string;
        wait: string | null;
        query: string;
      }>(
        `select application_name as app, state, wait_event as wait, query from pg_stat_activity
          where datname = current_database() and backend_type = 'client backend'
            and application_name <> $1 and state is not null`,
        [BENCH_APPLICATION],
      );
      this.samples += 1;
      for (const r of rows.rows) {
        const whose = r.app === FLEET_APPLICATION ? 'fleet instance' : 'other';
        const what =
          r.state === 'idle'
            ? `${whose}, idle`
            : `${whose}, ${r.state}${r.wait === null ? '' : ` (${r.wait})`}: ${label(r.query)}`;
        this.seen.set(what, (this.seen.get(what) ?? 0) + 1);
      }
    } finally {
      this.busy = false;
    }
  }
}
