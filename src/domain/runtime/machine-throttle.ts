import { KeywardError } from '../../errors/keyward-error.js';
import { CommonCode } from '../../errors/common-codes.js';
import { currentWindow, secondsToNextWindow } from '../gate/gate.js';

/**
 * The runtime calls one machine (app and fingerprint) may make a minute, counted by each instance
 * on its own (RUNTIME_MACHINE_RATE_LIMIT_PER_MINUTE). It slows a misbehaving copy — one caught in a
 * loop of check-outs or consumes — without slowing the rest of its vendor's fleet, which the app's
 * shared limit would. Counted in memory on purpose: a shared counter would cost a write per call,
 * which is what a fleet's heartbeats must not cost (DOMAIN.md §12). Behind a proxy that spreads
 * one machine's calls over k instances, the machine gets up to k times the limit: a brake, not a
 * quota. The counts start again each minute, so memory holds the machines of one minute.
 */
export class MachineThrottle {
  private window = -1;
  private readonly counts = new Map<string, number>();

  constructor(private readonly perMinute: number) {}

  /** Counts one call of the machine at `nowMs`; refuses it (429, Retry-After) past the limit. */
  take(appId: string, fingerprint: string, nowMs: number): void {
    if (this.perMinute <= 0) return;
    const window = currentWindow(nowMs);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    const key = `${appId}\u0000${fingerprint}`;
    const calls = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, calls);
    if (calls <= this.perMinute) return;
    throw new KeywardError(
      CommonCode.rateLimited,
      `too many calls from this machine: at most ${this.perMinute} a minute`,
      { httpStatus: 429, retryAfterSeconds: secondsToNextWindow(nowMs) },
    );
  }
}
