import { fillMessage, KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode, runtimeMessages, type RuntimeCodeValue } from '../../errors/runtime-codes.js';
import type { LeaseExpBound } from './lease-claims.js';
import type { Candidate } from './runtime.repository.js';

/** A refusal of check-out, ranked: with several candidates the caller hears the one that got furthest. */
export interface Refusal {
  code: RuntimeCodeValue;
  message: string;
  rank: number;
}

function refusal(code: RuntimeCodeValue, rank: number, ...values: Array<string | number>): Refusal {
  return { code, rank, message: fillMessage(runtimeMessages[code], ...values) };
}

export const NOT_ENTITLED: Refusal = refusal(RuntimeCode.notEntitled, 0);

/** A machine a relay's grant does not list: no license of the relay is its to use. */
export const MACHINE_NOT_LISTED: Refusal = refusal(RuntimeCode.machineNotListed, 0);

/** What can be judged before taking the product's lock: the asset's state and the dates. */
export function judgeStatic(candidate: Candidate, nowMs: number): Refusal | undefined {
  if (candidate.disabled) return refusal(RuntimeCode.assetDisabled, 1);
  if (candidate.startsAt !== null && nowMs < candidate.startsAt) {
    return refusal(RuntimeCode.notYetValid, 2, new Date(candidate.startsAt).toISOString());
  }
  if (candidate.endsAt !== null && nowMs > candidate.endsAt) {
    return refusal(RuntimeCode.validityEnded, 2, new Date(candidate.endsAt).toISOString());
  }
  return undefined;
}

/** The seats of a pool: a lent lock runs its one node; the owner's pool lost that node. */
export function seatLimit(candidate: Candidate): number | null {
  if (candidate.pool === 'lent') return 1;
  if (candidate.limitConcurrent === null) return null;
  return Math.max(0, candidate.limitConcurrent - (candidate.lentAway ? 1 : 0));
}

/** What is judged under the product's lock: accumulated time, consumption, free seats. */
export function judgeLimits(
  candidate: Candidate,
  usage: { usedMs: number; consumed: number },
  seatsInUse: number,
): Refusal | undefined {
  const seconds = candidate.limitTimeDuration;
  if (seconds !== null && usage.usedMs >= seconds * 1000) {
    return refusal(RuntimeCode.timeUsedUp, 3, seconds, Math.floor(usage.usedMs / 1000));
  }
  if (candidate.limitAmount !== null && usage.consumed >= candidate.limitAmount) {
    return refusal(RuntimeCode.amountUsedUp, 3, candidate.limitAmount, usage.consumed, 0);
  }
  const seats = seatLimit(candidate);
  if (seats !== null && seatsInUse >= seats) return refusal(RuntimeCode.seatsInUse, 4, seats, seatsInUse);
  return undefined;
}

const DAY_MS = 86_400_000;

/**
 * An offline lease's expiry: the earliest of the days asked for, the license's end and what
 * remains of its usage time (`usedMs`, the product's use so far), with which of them it is. A
 * signature outlives any revocation, so it must not outlive what the license itself allows.
 * On a tie the first in that order names it.
 */
export function offlineExpiry(
  candidate: Candidate,
  nowMs: number,
  offlineDays: number,
  usedMs: number,
): { expiresAt: number; bound: LeaseExpBound } {
  let expiry: { expiresAt: number; bound: LeaseExpBound } = {
    expiresAt: nowMs + offlineDays * DAY_MS,
    bound: 'offline-days',
  };
  if (candidate.endsAt !== null && candidate.endsAt < expiry.expiresAt) {
    expiry = { expiresAt: candidate.endsAt, bound: 'license-end' };
  }
  const seconds = candidate.limitTimeDuration;
  if (seconds !== null) {
    const left = nowMs + Math.max(0, seconds * 1000 - usedMs);
    if (left < expiry.expiresAt) expiry = { expiresAt: left, bound: 'time-duration' };
  }
  return expiry;
}

export function refusalError(r: Refusal): KeywardError {
  return new KeywardError(r.code, r.message);
}
