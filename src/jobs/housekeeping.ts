import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';

/**
 * Once a minute: purges expired nonces, rate counters, consume keys, tokens and stale login attempts, and ends
 * runtime leases whose heartbeats stopped, and prunes webhook events past their retention; sends
 * the renewal notices due (each once, whichever instance gets there first); rolls
 * the usage log into the usage rollups (one instance at a time, under a lock). Every
 * instance may run it: the deletes are idempotent and expired leases and old events are claimed
 * with SKIP LOCKED, so no coordination is needed.
 */
export function startHousekeeping(services: Services, log: FastifyBaseLogger): () => void {
  const run = async () => {
    try {
      await services.gate.purge();
      await services.tokens.purgeExpired();
      await services.login.purgeStale();
      await services.consoleSessions.purgeStale();
      // Leases whose heartbeats stopped free their seats (check-out also ends its product's own).
      await services.runtime.endExpired();
      await services.runtime.purgeConsumeKeys();
      await services.webhookRetention.prune();
    } catch (error) {
      log.warn({ err: error }, 'housekeeping failed; will retry');
    }
    try {
      // Apart from the rest: a failing rollup must not stop leases from expiring, nor the reverse.
      await services.usageRollups.run();
      await services.usageRollups.prune();
    } catch (error) {
      log.warn({ err: error }, 'usage rollup failed; its events wait for the next run');
    }
    try {
      // Apart too: a notice that fails is sent on a later run, and must not hold up the rest.
      await services.licenses.sendNotices();
    } catch (error) {
      log.warn({ err: error }, 'license notices failed; they are sent on a later run');
    }
  };
  const timer = setInterval(() => void run(), 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
