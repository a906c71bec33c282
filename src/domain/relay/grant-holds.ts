import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';
import { seatLimit } from '../runtime/entitlement.js';
import { RuntimeRepository, type Candidate } from '../runtime/runtime.repository.js';
import { SeatSlotsRepository } from '../runtime/seat-slots.repository.js';
import type { GrantShare, RelayGrantRow } from './relay-grants.repository.js';
import type { UsedShare } from './relay-return.js';
import { RelaySharesRepository } from './relay-shares.repository.js';

// What a pool grant holds at the vendor (docs/relay.md): the seats it takes as seat slots, and the
// shares of usage limits it charges to the licenses' use, given back by the relay's return.

/** A request the vendor cannot answer as it stands: the message names the field. */
export const invalid = (message: string) =>
  new KeywardError(RuntimeCode.validation, message, { cause: message });

/** The seats a grant holds of one product instance. */
export interface Hold {
  candidate: Candidate;
  /** Seats held at the vendor: none of a license without a seat limit. */
  seats: number;
  /** Seats the grant gives. */
  asked: number;
  /** The shares of the license's usage limits the grant holds: null where it has no such limit. */
  timeSeconds: number | null;
  amount: number | null;
  field: string;
}

/**
 * Takes each hold's seats for the grant until its end: slots named `grant:<id>`, one holder per
 * seat (`relay:<relay id>`, the relay's fingerprint and the seat's number), so a renewal by the
 * same relay takes its own slots again. A seat short rolls the whole grant back.
 */
export async function holdSeats(
  trx: Db,
  holds: readonly Hold[],
  grant: RelayGrantRow,
  now: Date,
): Promise<void> {
  const slots = new SeatSlotsRepository(trx);
  for (const hold of holds) {
    const limit = seatLimit(hold.candidate);
    if (limit === null) continue;
    for (let seat = 0; seat < hold.seats; seat += 1) {
      const slot = await slots.claim(
        { productId: hold.candidate.productId, pool: hold.candidate.pool, limit },
        {
          leaseId: `grant:${grant.id}`,
          holderKey: `relay:${grant.relayId}`,
          fingerprint: `${grant.fingerprint}#${seat}`,
          heldUntil: grant.endsAt,
        },
        now,
      );
      if (slot === undefined) {
        throw new KeywardError(
          RuntimeCode.seatsInUse,
          `${hold.field}.seats: ${hold.candidate.crmProductId} has ${seat} of the ${hold.seats} seats asked free now`,
          { httpStatus: 409 },
        );
      }
    }
  }
}

/**
 * The share of a usage limit (`limit`: the license's limitTimeDuration in seconds or limitAmount)
 * a grant holds: what the relay asked, which a license with such a limit must ask for (a relay
 * counting a limit the vendor also counts would let both spend it whole). Null without a limit.
 */
export function shareOf(
  limit: number | null,
  asked: number | undefined,
  field: string,
  candidate: Candidate,
): number | null {
  if (limit === null) return null;
  if (asked === undefined) {
    throw invalid(
      `${field}: ${candidate.crmProductId} has a usage limit of ${limit}; ask the relay's share of it (keyward relay init --ask ASSET/PRODUCT=SEATS,${field.endsWith('.amount') ? 'amount=N' : 'time=SECONDS'})`,
    );
  }
  return asked;
}

/** The shares a grant charges, as its row keeps them to give back what goes unused. */
export function sharesOf(holds: readonly Hold[]): GrantShare[] {
  return holds
    .filter((h) => h.timeSeconds !== null || h.amount !== null)
    .map((h) => ({
      productId: h.candidate.productId,
      assetNum: h.candidate.assetNum,
      crmProductId: h.candidate.crmProductId ?? '',
      timeSeconds: h.timeSeconds,
      amount: h.amount,
    }));
}

/**
 * Charges each hold's shares to the license's use, under the same conditional row write a consume
 * takes: a share past what the license has left rolls the whole grant back.
 */
export async function chargeShares(trx: Db, holds: readonly Hold[], now: Date): Promise<void> {
  const runtime = new RuntimeRepository(trx);
  const shares = new RelaySharesRepository(trx);
  for (const hold of holds) {
    const { candidate } = hold;
    if (hold.timeSeconds !== null && candidate.limitTimeDuration !== null) {
      // Leases past their expiry are charged to it first, as a check-out does.
      await runtime.endExpired(now, candidate.productId);
      const limitMs = candidate.limitTimeDuration * 1000;
      if (!(await shares.chargeTime(candidate.productId, hold.timeSeconds * 1000, limitMs, now))) {
        const used = Math.floor((await runtime.usage(candidate.productId, now)).usedMs / 1000);
        throw new KeywardError(
          RuntimeCode.timeUsedUp,
          `${hold.field}.timeSeconds: ${candidate.crmProductId} has ${Math.max(0, candidate.limitTimeDuration - used)} of its ${candidate.limitTimeDuration} seconds left; ${hold.timeSeconds} asked`,
          { httpStatus: 409 },
        );
      }
    }
    if (hold.amount !== null && candidate.limitAmount !== null) {
      if (!(await shares.chargeAmount(candidate.productId, hold.amount, candidate.limitAmount))) {
        const consumed = (await runtime.usage(candidate.productId, now)).consumed;
        throw new KeywardError(
          RuntimeCode.amountUsedUp,
          `${hold.field}.amount: ${candidate.crmProductId} has ${Math.max(0, candidate.limitAmount - consumed)} of its ${candidate.limitAmount} left; ${hold.amount} asked`,
          { httpStatus: 409 },
        );
      }
    }
  }
}

/**
 * What a return gives back of each share: the share less the use the relay says it gave, never
 * less than nothing. A share the return says nothing of (a relay that kept no count) gives nothing back.
 */
function unusedShares(shares: readonly GrantShare[], used: readonly UsedShare[]): GrantShare[] {
  return shares.flatMap((share) => {
    const said = used.find((u) => u.assetNum === share.assetNum && u.crmProductId === share.crmProductId);
    if (said === undefined) return [];
    const back = (held: number | null, spent: number | undefined) =>
      held === null || spent === undefined ? null : Math.max(0, held - spent);
    const timeSeconds = back(share.timeSeconds, said.timeSeconds);
    const amount = back(share.amount, said.amount);
    return timeSeconds === null && amount === null ? [] : [{ ...share, timeSeconds, amount }];
  });
}

/** `ASSET/PRODUCT time=Ns amount=N`: a share as the audit trail says it. */
export function shareLine(share: GrantShare): string {
  const parts = [`${share.assetNum}/${share.crmProductId}`];
  if (share.timeSeconds !== null) parts.push(`time=${share.timeSeconds}s`);
  if (share.amount !== null) parts.push(`amount=${share.amount}`);
  return parts.join(' ');
}

/** Gives back to each license what a return says went unused of its share; answers what went back. */
export async function giveBackShares(
  trx: Db,
  shares: readonly GrantShare[],
  used: readonly UsedShare[],
): Promise<GrantShare[]> {
  const refunded = unusedShares(shares, used);
  const repository = new RelaySharesRepository(trx);
  for (const r of refunded) await repository.refund(r.productId, (r.timeSeconds ?? 0) * 1000, r.amount ?? 0);
  return refunded;
}
