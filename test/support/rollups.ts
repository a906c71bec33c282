import type { RollupRun, RollupService } from '../../src/domain/usage/rollup.service.js';

/**
 * Rolls every usage event there is, waiting out another run that holds the job's lock. On the
 * shared PostgreSQL database the servers of the other test files roll usage too, and a run that
 * finds the lock taken leaves the events to that run: a test about to read the rollups must wait
 * until its own events are in them.
 */
export async function rollAll(rollups: Pick<RollupService, 'run'>, timeoutMs = 30_000): Promise<RollupRun> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const run = await rollups.run();
    if (!run.busy) return run;
    if (Date.now() > deadline) throw new Error(`the usage rollup lock was held for ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
