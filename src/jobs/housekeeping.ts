import type { FastifyBaseLogger } from 'fastify';
import type { Services } from '../services.js';

/**
 * Purges expired nonces, rate counters, tokens and stale login attempts once a minute. Every
 * instance may run it: the deletes are idempotent, so no coordination is needed.
 */
export function startHousekeeping(services: Services, log: FastifyBaseLogger): () => void {
  const run = async () => {
    try {
      await services.gate.purge();
      await services.tokens.purgeExpired();
      await services.login.purgeStale();
      await services.consoleSessions.purgeStale();
    } catch (error) {
      log.warn({ err: error }, 'housekeeping failed; will retry');
    }
  };
  const timer = setInterval(() => void run(), 60_000);
  timer.unref();
  return () => clearInterval(timer);
}
