import type { FastifyBaseLogger } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startHousekeeping } from '../../src/jobs/housekeeping.js';
import type { Services } from '../../src/services.js';

// The renewal notices ride on the once-a-minute housekeeping every instance runs, apart from its
// other work: a rollup or a purge that fails does not hold them up, nor they the rest.

afterEach(() => {
  vi.useRealTimers();
});

function services(failing: string[]) {
  const calls: string[] = [];
  const step = (name: string) => async () => {
    calls.push(name);
    if (failing.includes(name)) throw new Error(`${name} failed`);
  };
  const fake = {
    gate: { purge: step('gate.purge') },
    tokens: { purgeExpired: step('tokens.purgeExpired') },
    login: { purgeStale: step('login.purgeStale') },
    consoleSessions: { purgeStale: step('consoleSessions.purgeStale') },
    runtime: { endExpired: step('runtime.endExpired'), purgeConsumeKeys: step('runtime.purgeConsumeKeys') },
    webhookRetention: { prune: step('webhookRetention.prune') },
    usageRollups: { run: step('usageRollups.run'), prune: step('usageRollups.prune') },
    licenses: { sendNotices: step('licenses.sendNotices') },
  };
  return { calls, services: fake as unknown as Services };
}

const log = { warn: vi.fn() } as unknown as FastifyBaseLogger;

describe('the housekeeping', () => {
  it('sends the renewal notices every minute, even when the other work fails', async () => {
    vi.useFakeTimers();
    const { calls, services: fake } = services(['runtime.endExpired', 'usageRollups.run']);
    const stop = startHousekeeping(fake, log);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.filter((c) => c === 'licenses.sendNotices')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(calls.filter((c) => c === 'licenses.sendNotices')).toHaveLength(2);
    stop();
  });

  it('goes on with the next run when the notices fail', async () => {
    vi.useFakeTimers();
    const { calls, services: fake } = services(['licenses.sendNotices']);
    const stop = startHousekeeping(fake, log);
    await vi.advanceTimersByTimeAsync(120_000);
    expect(calls.filter((c) => c === 'runtime.endExpired')).toHaveLength(2);
    expect(calls.filter((c) => c === 'licenses.sendNotices')).toHaveLength(2);
    stop();
  });
});
