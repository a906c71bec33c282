import { randomUUID } from 'node:crypto';
import { DatabaseBusyError } from '../../db/busy.js';
import type { Db } from '../../db/client.js';
import { fillMessage, KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode, runtimeMessages, type RuntimeCodeValue } from '../../errors/runtime-codes.js';
import type { AuditActor, AuditChange } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { deniedEvent, UsageEventsRepository } from '../usage/usage-events.repository.js';
import type { UserTokenGrant } from '../tokens/tokens.repository.js';
import {
  judgeLimits,
  judgeStatic,
  MACHINE_NOT_LISTED,
  NOT_ENTITLED,
  offlineExpiry,
  refusalError,
  seatLimit,
  type Refusal,
} from './entitlement.js';
import {
  LEASE_ISSUER,
  type LeaseExpBound,
  type LeaseSigner,
  type OfflineLeaseClaims,
} from './lease-claims.js';
import { Lanes } from '../shared/lanes.js';
import { HeartbeatBatcher } from './heartbeat-batcher.js';
import { SeatSlotsRepository } from './seat-slots.repository.js';
import { MachineThrottle } from './machine-throttle.js';
import { ConsumeKeysRepository, type KeyedConsume } from './consume-keys.repository.js';
import type { Beat } from './heartbeat.repository.js';
import {
  RuntimeRepository,
  type Candidate,
  type LeaseFilter,
  type LeaseListing,
  type LeaseState,
  type NewLease,
  type ProductSelector,
} from './runtime.repository.js';

/** The app a runtime call comes through, as its guard admitted it. */
export interface RuntimeApp {
  appId: string;
  appKey: string;
  channels: string[];
}

/** Who runs the product: a member (by his user token) or a lock (by its asset number). */
export type Holder = { kind: 'member'; member: UserTokenGrant } | { kind: 'lock'; assetNum: string };

export interface CheckOutInput {
  app: RuntimeApp;
  holder: Holder;
  fingerprint: string;
  product: ProductSelector;
  /** A member's asset to use, when several carry the product. */
  assetNum?: string;
  /** Asks for an offline lease of this many days (at most the app's setting). */
  offlineDays?: number;
  /** An offline activation's request nonce (base64url): the signed lease names it. */
  activationNonce?: string;
  actor: AuditActor;
}

export interface LeaseAnswer {
  leaseId: string;
  /** `granted` a new seat, `resumed` the live lease this holder and machine already had. */
  status: 'granted' | 'resumed';
  assetNum: string;
  expiresAt: number;
  heartbeatIntervalSeconds: number;
  product: { crmProductId: string | null; productUri: string | null; productName: string | null };
  limits: OfflineLeaseClaims['limits'];
  /** The compact JWS of an offline lease, when one was asked for. */
  offlineLease: string | null;
}

/** A check-out's answer with what bounded its offline expiry, for the signature. */
type Granted = LeaseAnswer & { expBound: LeaseExpBound | null };

/** What a check-in answers: the lease's use, and when its seat is free for another machine. */
export interface CheckInAnswer {
  usedSeconds: number;
  /**
   * Epoch ms. Now for an online lease; an offline lease's expiry, since its signature stays valid
   * until then, unless its app lets offline leases be returned early.
   */
  seatFreeAt: number;
}

export interface HeartbeatAnswer {
  leaseId: string;
  expiresAt: number;
  heartbeatIntervalSeconds: number;
  usedSeconds: number;
}

/** How long a consume's Idempotency-Key answers its first result (docs/runtime.md). */
export const CONSUME_KEY_HOURS = 24;

export interface ConsumeAnswer {
  consumed: number;
  limit: number | null;
  remaining: number | null;
}

/** Heartbeat intervals a lease's stored expiry stays ahead of its last beat (ADR 0020). */
const BEATS_AHEAD = 2.5;

export interface RuntimeSettings {
  leaseSeconds: number;
  heartbeatSeconds: number;
  /** Runtime calls one machine may make a minute on one instance (MachineThrottle); 0 or absent: no limit. */
  machineRateLimitPerMinute?: number;
}

export interface RuntimeOptions {
  signer: LeaseSigner;
  /** The longest offline lease, in days, the app may hand out (0: none). */
  offlineDaysOf: (appId: string) => Promise<number>;
  /** Whether the app's check-in of an offline lease frees its seat at once (trusting the software). */
  offlineEarlyReturnOf: (appId: string) => Promise<boolean>;
  settings: RuntimeSettings;
  /** The clock, injectable so tests can expire leases and end validity windows. */
  now?: () => number;
  /**
   * How many check-out transactions this instance runs at once, and how long one waits for its
   * turn before it is answered 503; absent: no bound (the embedded database runs one at a time).
   */
  checkOutTurns?: { inFlight: number; waitMs: number };
  /** On a relay: what its pool grant adds to every license's own rules (docs/relay.md). */
  grantTerms?: GrantTerms;
}

/**
 * A relay's grant terms. `machines`: the fingerprints that may check out (null: any machine of
 * the closed network). `overageSeats`: check-outs each product may take past its granted seats,
 * reported to the vendor; its leases still name the granted seats, so verifiers hold the relay to
 * its grant and the overage shows only as more leases than seats.
 */
export interface GrantTerms {
  machines: ReadonlySet<string> | null;
  overageSeats: number;
}

/** The refusal of a check-out that finds every seat it could take held. */
function seatsTaken(candidate: Candidate, usage: { usedMs: number; consumed: number }): Refusal {
  return judgeLimits(candidate, usage, seatLimit(candidate) ?? 0) ?? NOT_ENTITLED;
}

/** A check-out refused inside its transaction: thrown, so that the transaction rolls back. */
class Refused extends Error {
  constructor(readonly refusal: Refusal) {
    super(refusal.message);
  }
}

/** A license whose use no limit counts against: its use is not read at check-out. */
const NO_USAGE = { usedMs: 0, consumed: 0 } as const;

function holderKey(holder: Holder, lockAssetId: string | null): string {
  return holder.kind === 'member' ? `m:${holder.member.memberId}` : `l:${lockAssetId ?? ''}`;
}

function limitsOf(c: Candidate): OfflineLeaseClaims['limits'] {
  return {
    concurrent: c.limitConcurrent,
    timeDurationSeconds: c.limitTimeDuration,
    amount: c.limitAmount,
    startDate: c.startsAt,
    endDate: c.endsAt,
  };
}

function leaseError(code: typeof RuntimeCode.leaseNotFound | typeof RuntimeCode.leaseExpired): KeywardError {
  return new KeywardError(code, runtimeMessages[code]);
}

/**
 * The license runtime: check-out, heartbeat, check-in and consumption of what orders granted.
 * A seat is a slot row claimed with SKIP LOCKED (SeatSlotsRepository), so seats hold across any
 * number of server instances without check-outs of one license taking turns; nothing about a
 * lease lives in this process.
 */
export class RuntimeService {
  private readonly now: () => number;
  private readonly heartbeats: HeartbeatBatcher;
  private readonly machines: MachineThrottle;
  /** Check-out transactions in flight, each license in its own line (see RuntimeOptions.checkOutTurns). */
  private readonly checkOutTurns: Lanes | undefined;
  private readonly denialListeners: Array<(code: RuntimeCodeValue) => void> = [];

  constructor(
    private readonly db: Db,
    private readonly options: RuntimeOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.heartbeats = new HeartbeatBatcher(db);
    this.machines = new MachineThrottle(options.settings.machineRateLimitPerMinute ?? 0);
    const turns = options.checkOutTurns;
    // A check-out holds its connection across its transaction's statements: unbounded, a wave of
    // them takes every connection of the pool and heartbeats, which need one short statement,
    // queue behind the whole wave. Bounded below the pool, heartbeats always find a connection,
    // and licenses take turns, so one busy license does not hold back the others' check-outs.
    this.checkOutTurns =
      turns === undefined
        ? undefined
        : new Lanes(turns.inFlight, { ms: turns.waitMs, tooLong: () => new DatabaseBusyError(turns.waitMs) });
  }

  get settings(): RuntimeSettings {
    return this.options.settings;
  }

  /** The seats a check-out may take of a license: its own, and on a relay its grant's overage. */
  private seatsOf(candidate: Candidate): number | null {
    const seats = seatLimit(candidate);
    return seats === null ? null : seats + (this.options.grantTerms?.overageSeats ?? 0);
  }

  async checkOut(input: CheckOutInput): Promise<LeaseAnswer> {
    const nowMs = this.now();
    this.machines.take(input.app.appId, input.fingerprint, nowMs);
    const offlineDays = input.offlineDays ?? 0;
    if (offlineDays > 0) {
      const allowed = await this.options.offlineDaysOf(input.app.appId);
      if (offlineDays > allowed) {
        throw new KeywardError(
          RuntimeCode.offlineNotAllowed,
          fillMessage(runtimeMessages[RuntimeCode.offlineNotAllowed], offlineDays, allowed),
        );
      }
    }
    const repository = new RuntimeRepository(this.db);
    const listed = this.options.grantTerms?.machines;
    if (listed != null && !listed.has(input.fingerprint)) {
      await this.recordDenial(input, MACHINE_NOT_LISTED, null);
      throw refusalError(MACHINE_NOT_LISTED);
    }
    let lockAssetId: string | null = null;
    let candidates: Candidate[];
    if (input.holder.kind === 'member') {
      candidates = await repository.memberCandidates(
        input.holder.member.memberId,
        input.product,
        input.assetNum,
      );
    } else {
      const found = await repository.lockCandidates(input.holder.assetNum, input.app.channels, input.product);
      lockAssetId = found?.lockAssetId ?? null;
      candidates = found?.candidates ?? [];
    }

    let best: Refusal = NOT_ENTITLED;
    for (const candidate of candidates) {
      const early = judgeStatic(candidate, nowMs);
      if (early !== undefined) {
        if (early.rank > best.rank) best = early;
        continue;
      }
      // One transaction per candidate: a refusal rolls it back (the seat slot it may have taken
      // with it), and no check-out holds two licenses' slots at once.
      const outcome = await this.takeOnce(input, candidate, lockAssetId, nowMs, offlineDays);
      if ('refusal' in outcome) {
        if (outcome.refusal.rank > best.rank) best = outcome.refusal;
        continue;
      }
      const { expBound, ...answer } = outcome.answer;
      return expBound === null ? answer : this.signed(input, answer, expBound, nowMs);
    }
    // A lock's refusal counts for the enterprise of the lock's customer, as its seats do.
    await this.recordDenial(input, best, candidates[0]?.enterpriseId ?? null);
    throw refusalError(best);
  }

  /** One candidate's transaction; a refusal found inside it rolls it back. */
  private async takeOnce(
    input: CheckOutInput,
    candidate: Candidate,
    lockAssetId: string | null,
    nowMs: number,
    offlineDays: number,
  ): Promise<{ answer: Granted } | { refusal: Refusal }> {
    const transaction = async () =>
      (await this.placeAtOnce(input, candidate, lockAssetId, nowMs, offlineDays)) ??
      this.db
        .transaction()
        .execute((trx) => this.take(trx, input, candidate, lockAssetId, nowMs, offlineDays));
    const turns = this.checkOutTurns;
    try {
      return await (turns === undefined
        ? transaction()
        : turns.run(String(candidate.productId), transaction));
    } catch (error) {
      if (error instanceof Refused) return { refusal: error.refusal };
      throw error;
    }
  }

  /**
   * The common check-out, a new machine taking a free seat of a license counted by seats alone, in
   * one statement with no transaction around it (SeatSlotsRepository.placeWithSeat): a 9:00 wave
   * is mostly these. Undefined when it does not apply or decided nothing; the transaction of
   * `take` then decides, as it does every other case (a resume, a lease to end, usage limits).
   */
  private async placeAtOnce(
    input: CheckOutInput,
    candidate: Candidate,
    lockAssetId: string | null,
    nowMs: number,
    offlineDays: number,
  ): Promise<{ answer: Granted } | undefined> {
    const seats = this.seatsOf(candidate);
    if (seats === null || offlineDays > 0) return undefined;
    if (candidate.limitTimeDuration !== null || candidate.limitAmount !== null) return undefined;
    const expiresAt = new Date(nowMs + this.settings.leaseSeconds * 1000);
    const lease = this.newLease(input, candidate, lockAssetId, new Date(nowMs), expiresAt, false);
    const slot = await new SeatSlotsRepository(this.db).placeWithSeat(
      { productId: candidate.productId, pool: candidate.pool, limit: seats },
      lease,
    );
    if (slot === undefined) return undefined;
    return { answer: this.answer(candidate, lease.id, 'granted', expiresAt, null) };
  }

  /** The lease a check-out places for its machine. */
  private newLease(
    input: CheckOutInput,
    candidate: Candidate,
    lockAssetId: string | null,
    now: Date,
    expiresAt: Date,
    offline: boolean,
  ): NewLease {
    return {
      id: randomUUID(),
      appId: input.app.appId,
      productId: candidate.productId,
      assetId: candidate.assetId,
      holderKind: input.holder.kind,
      holderKey: holderKey(input.holder, lockAssetId),
      memberId: input.holder.kind === 'member' ? input.holder.member.memberId : null,
      lockAssetId,
      enterpriseId:
        input.holder.kind === 'member' ? input.holder.member.enterpriseId : candidate.enterpriseId,
      pool: candidate.pool,
      fingerprint: input.fingerprint,
      offline,
      now,
      expiresAt,
    };
  }

  private async take(
    trx: Db,
    input: CheckOutInput,
    candidate: Candidate,
    lockAssetId: string | null,
    nowMs: number,
    offlineDays: number,
  ): Promise<{ answer: Granted }> {
    const repository = new RuntimeRepository(trx);
    const now = new Date(nowMs);
    const key = holderKey(input.holder, lockAssetId);
    const offline = offlineDays > 0;
    // A time-limited license counts what expired leases ran up to their expiry: ended first.
    if (candidate.limitTimeDuration !== null) await repository.endExpired(now, candidate.productId);
    // Use is summed over the license's live leases: read only when a limit is counted against it.
    const usage =
      candidate.limitTimeDuration !== null || candidate.limitAmount !== null
        ? await repository.usage(candidate.productId, now)
        : NO_USAGE;
    const expiry = offline
      ? offlineExpiry(candidate, nowMs, offlineDays, usage.usedMs)
      : { expiresAt: nowMs + this.settings.leaseSeconds * 1000, bound: null };
    const expiresAt = new Date(expiry.expiresAt);
    const lease = this.newLease(input, candidate, lockAssetId, now, expiresAt, offline);
    // The lease goes in first: check-outs of one machine take turns on its row (the second finds
    // the lease the first made, and resumes it rather than taking a second seat), and a refusal
    // below rolls the row back with the transaction.
    // A time-limited license counts its live leases where its use is kept (migration 0187).
    const place = async () => {
      const result = await repository.placeLease(lease);
      if (result.inserted && candidate.limitTimeDuration !== null) {
        await repository.liveLeaseStarted(candidate.productId, now);
      }
      return result;
    };
    let placed = await place();
    if (!placed.inserted) {
      const state = await repository.leaseForUpdate(placed.id, input.app.appId);
      // The machine's live lease of this product was made through another app: its seat is in use,
      // and not this app's to resume.
      if (state === undefined) throw new Refused(seatsTaken(candidate, usage));
      if (state.endedAt === null && state.expiresAt > now) {
        // The row keeps the latest expiry any answer gave (a signature handed out before stays
        // valid until its own), while a new signature gets no more than this check-out allows.
        const keepUntil = new Date(Math.max(state.expiresAt.getTime(), expiresAt.getTime()));
        await repository.touch(placed.id, now, keepUntil, offline);
        const answered = offline ? expiresAt : keepUntil;
        return { answer: this.answer(candidate, placed.id, 'resumed', answered, expiry.bound) };
      }
      // Its heartbeats stopped: it ends here (charged to its expiry), and the machine takes a seat anew.
      await repository.endExpired(now, candidate.productId, 1, placed.id);
      placed = await place();
    }
    const refusal = judgeLimits(candidate, usage, 0);
    if (refusal !== undefined) throw new Refused(refusal);
    const seats = this.seatsOf(candidate);
    if (seats !== null) {
      const slot = await new SeatSlotsRepository(trx).claim(
        { productId: candidate.productId, pool: candidate.pool, limit: seats },
        { leaseId: placed.id, holderKey: key, fingerprint: input.fingerprint, heldUntil: expiresAt },
        now,
      );
      // No free slot: every seat is held, which is what the refusal says.
      if (slot === undefined) throw new Refused(seatsTaken(candidate, usage));
    }
    return { answer: this.answer(candidate, placed.id, 'granted', expiresAt, expiry.bound) };
  }

  private answer(
    candidate: Candidate,
    leaseId: string,
    status: LeaseAnswer['status'],
    expiresAt: Date,
    expBound: LeaseExpBound | null,
  ): Granted {
    return {
      leaseId,
      status,
      assetNum: candidate.assetNum,
      expiresAt: expiresAt.getTime(),
      heartbeatIntervalSeconds: this.settings.heartbeatSeconds,
      product: {
        crmProductId: candidate.crmProductId,
        productUri: candidate.productUri,
        productName: candidate.productName,
      },
      limits: limitsOf(candidate),
      offlineLease: null,
      expBound,
    };
  }

  /**
   * The signed offline lease, made after the lease committed: signing may touch the database (a
   * new key is recorded before its first use), which must not wait on a transaction of ours. A
   * failure here leaves the lease granted; checking out again resumes it and signs anew.
   */
  private async signed(
    input: CheckOutInput,
    answer: LeaseAnswer,
    expBound: LeaseExpBound,
    nowMs: number,
  ): Promise<LeaseAnswer> {
    const issuedAt = Math.floor(nowMs / 1000);
    const { token } = await this.options.signer.sign({
      iss: LEASE_ISSUER,
      sub: answer.leaseId,
      jti: answer.leaseId,
      aud: input.app.appKey,
      iat: issuedAt,
      nbf: issuedAt,
      exp: Math.floor(answer.expiresAt / 1000),
      holder:
        input.holder.kind === 'member'
          ? {
              kind: 'member',
              memberGlobalId: input.holder.member.memberGlobalId,
              enterpriseGlobalId: input.holder.member.enterpriseGlobalId,
            }
          : { kind: 'lock', assetNum: input.holder.assetNum },
      fingerprint: input.fingerprint,
      assetNum: answer.assetNum,
      product: answer.product,
      limits: answer.limits,
      expBound,
      ...(input.activationNonce === undefined ? {} : { activation: { nonce: input.activationNonce } }),
    });
    return { ...answer, offlineLease: token };
  }

  /**
   * Extends a live lease, charging its use; answers "revoked" (90009, with the reason) when the
   * holder may no longer run the product, "expired" (90010) when its heartbeats stopped too long.
   */
  async heartbeat(input: {
    app: RuntimeApp;
    leaseId: string;
    fingerprint: string;
    actor: AuditActor;
  }): Promise<HeartbeatAnswer> {
    const nowMs = this.now();
    this.machines.take(input.app.appId, input.fingerprint, nowMs);
    const now = new Date(nowMs);
    // The common case is this one statement (shared with the heartbeats that came in with this
    // one), outside any transaction.
    const beat = await this.heartbeats.beat({
      leaseId: input.leaseId,
      appId: input.app.appId,
      fingerprint: input.fingerprint,
      now,
      extendTo: new Date(nowMs + this.settings.leaseSeconds * 1000),
      // Written when fewer than two and a half beats' worth of lease remain: a copy beating as
      // told then writes one beat in three at the default settings (the bound falls between two
      // beats, so a beat a little late does not write early), still outlives a lost beat, and a
      // stopped one frees its seat within RUNTIME_LEASE_SECONDS of its last beat, as before.
      writeBefore: new Date(
        nowMs + Math.min(this.settings.leaseSeconds, BEATS_AHEAD * this.settings.heartbeatSeconds) * 1000,
      ),
    });
    if (beat === undefined)
      throw await this.whyNotLive(input.app.appId, input.leaseId, input.fingerprint, now);
    const reason = this.lostBecause(beat, nowMs);
    if (reason !== null) {
      await this.db.transaction().execute(async (trx) => {
        // Only the call that ends the lease records it: two heartbeats racing audit once.
        if ((await new RuntimeRepository(trx).endLease(input.leaseId, now, reason)) === undefined) return;
        await new AuditRepository(trx).record(input.actor, [revocationChange(input.leaseId, beat, reason)]);
      });
      throw revoked(reason);
    }
    return {
      leaseId: input.leaseId,
      expiresAt: beat.expiresAt.getTime(),
      heartbeatIntervalSeconds: this.settings.heartbeatSeconds,
      usedSeconds: Math.floor(beat.usedMs / 1000),
    };
  }

  /** The refusal for a lease a heartbeat did not find live; an expired one is ended on the way. */
  private async whyNotLive(
    appId: string,
    leaseId: string,
    fingerprint: string,
    now: Date,
  ): Promise<KeywardError> {
    const repository = new RuntimeRepository(this.db);
    const state = await repository.leaseState(leaseId, appId);
    // Another app's lease, or another machine's, is not found: ids are not proof of holding.
    if (state === undefined || state.fingerprint !== fingerprint)
      return leaseError(RuntimeCode.leaseNotFound);
    if (state.endedAt === null) {
      await repository.endExpired(now, state.productId);
      return leaseError(RuntimeCode.leaseExpired);
    }
    return endedLeaseError(state.endReason);
  }

  private lostBecause(beat: Beat, nowMs: number): string | null {
    if (beat.lostBecause !== null) return beat.lostBecause;
    if (beat.endsAt !== null && nowMs > beat.endsAt) return 'the license ended';
    if (beat.startsAt !== null && nowMs < beat.startsAt) return 'the license is not valid yet';
    const seconds = beat.limitTimeDuration;
    if (seconds !== null && (beat.productUsedMs ?? 0) > seconds * 1000) return 'the usage time is used up';
    return null;
  }

  /** The app's lease for this machine; an ended one answers why it ended. */
  private async liveState(
    repository: RuntimeRepository,
    appId: string,
    leaseId: string,
    fingerprint: string,
  ): Promise<LeaseState> {
    const state = await repository.leaseForUpdate(leaseId, appId);
    // Another app's lease, or another machine's, is not found: ids are not proof of holding.
    if (state === undefined || state.fingerprint !== fingerprint) throw leaseError(RuntimeCode.leaseNotFound);
    if (state.endedAt !== null) throw endedLeaseError(state.endReason);
    return state;
  }

  /**
   * Ends the lease and charges its use. An online lease's seat is free at once. An offline lease
   * keeps its seat until it expires: its signature stays valid, and nothing tells the server the
   * software deleted it, unless the app lets offline leases be returned early (trusting that it
   * did). Checking in a lease already checked in answers success again, with the same seatFreeAt.
   */
  async checkIn(input: { app: RuntimeApp; leaseId: string; fingerprint: string }): Promise<CheckInAnswer> {
    const nowMs = this.now();
    this.machines.take(input.app.appId, input.fingerprint, nowMs);
    const repository = new RuntimeRepository(this.db);
    const state = await repository.leaseState(input.leaseId, input.app.appId);
    if (state === undefined || state.fingerprint !== input.fingerprint)
      throw leaseError(RuntimeCode.leaseNotFound);
    if (state.endedAt !== null) return endedCheckIn(state);
    const holdsSeat =
      state.offline &&
      state.expiresAt.getTime() > nowMs &&
      !(await this.options.offlineEarlyReturnOf(input.app.appId));
    const seatHeldUntil = holdsSeat ? state.expiresAt : null;
    const used = await repository.endLease(state.id, new Date(nowMs), 'checked_in', seatHeldUntil);
    if (used === undefined) {
      // Ended meanwhile (a racing check-in, expiry or revocation): answer what that left.
      const ended = await repository.leaseState(input.leaseId, input.app.appId);
      return ended === undefined ? endedCheckIn(state) : endedCheckIn(ended);
    }
    return { usedSeconds: Math.floor(used / 1000), seatFreeAt: seatHeldUntil?.getTime() ?? nowMs };
  }

  /**
   * Draws `amount` from the product's limitAmount, atomically; refused past the limit. With an
   * Idempotency-Key, a repeat of the call within CONSUME_KEY_HOURS answers the first result and
   * draws nothing (a client may retry a consume whose answer it lost); a refusal keeps no key.
   */
  async consume(input: {
    app: RuntimeApp;
    leaseId: string;
    fingerprint: string;
    amount: number;
    idempotencyKey?: string;
  }): Promise<ConsumeAnswer> {
    const nowMs = this.now();
    this.machines.take(input.app.appId, input.fingerprint, nowMs);
    return this.db.transaction().execute(async (trx) => {
      const keys = new ConsumeKeysRepository(trx);
      const key = input.idempotencyKey;
      const call = key === undefined ? undefined : { appId: input.app.appId, key, ...input };
      if (call !== undefined && !(await keys.claim(call, new Date(nowMs)))) return this.repeated(keys, call);
      const repository = new RuntimeRepository(trx);
      const state = await this.liveState(repository, input.app.appId, input.leaseId, input.fingerprint);
      if (state.expiresAt.getTime() <= nowMs) throw leaseError(RuntimeCode.leaseExpired);
      if (state.lostBecause !== null) throw revoked(state.lostBecause);
      const limit = state.limitAmount;
      const consumed = await repository.consume(state.productId, input.amount, limit);
      if (consumed === undefined) {
        const current = (await repository.usage(state.productId, new Date(nowMs))).consumed;
        throw new KeywardError(
          RuntimeCode.amountUsedUp,
          fillMessage(runtimeMessages[RuntimeCode.amountUsedUp], limit ?? 0, current, input.amount),
        );
      }
      await new UsageEventsRepository(trx).consumed(
        new Date(nowMs),
        state.productId,
        input.app.appId,
        input.amount,
      );
      if (call !== undefined) await keys.settle(call.appId, call.key, consumed, limit);
      return { consumed, limit, remaining: limit === null ? null : limit - consumed };
    });
  }

  /** A consume whose key was used: the first answer, if it asked the same. */
  private async repeated(keys: ConsumeKeysRepository, call: KeyedConsume): Promise<ConsumeAnswer> {
    const kept = await keys.kept(call.appId, call.key);
    if (
      kept === undefined ||
      kept.consumed === null ||
      kept.leaseId !== call.leaseId ||
      kept.amount !== call.amount
    ) {
      throw new KeywardError(
        RuntimeCode.validation,
        'Idempotency-Key: already used by this application for another consume (another lease or amount)',
      );
    }
    const { consumed, limit } = kept;
    return { consumed, limit, remaining: limit === null ? null : limit - consumed };
  }

  /** Housekeeping: forgets consume keys past their window. */
  async purgeConsumeKeys(): Promise<void> {
    await new ConsumeKeysRepository(this.db).purge(new Date(this.now() - CONSUME_KEY_HOURS * 3_600_000));
  }

  /** Housekeeping: ends leases whose heartbeats stopped, freeing their seats. */
  async endExpired(): Promise<number> {
    return new RuntimeRepository(this.db).endExpired(new Date(this.now()), null);
  }

  async list(filter: Omit<LeaseFilter, 'now'>): Promise<LeaseListing[]> {
    return new RuntimeRepository(this.db).list({ ...filter, now: new Date(this.now()) });
  }

  async seatsByProduct(): Promise<Array<{ product: string; seats: number }>> {
    return new RuntimeRepository(this.db).seatsByProduct(new Date(this.now()));
  }

  /** Called with each refused check-out's code: /metrics counts them by reason. */
  onDenial(listener: (code: RuntimeCodeValue) => void): void {
    this.denialListeners.push(listener);
  }

  private async recordDenial(
    input: CheckOutInput,
    refusal: Refusal,
    lockEnterpriseId: number | null,
  ): Promise<void> {
    const holder = input.holder.kind === 'member' ? input.holder.member.account : input.holder.assetNum;
    const enterprise = input.holder.kind === 'member' ? { id: input.holder.member.enterpriseId } : null;
    for (const listener of this.denialListeners) listener(refusal.code);
    // The audit row and the usage log's event in one statement: the denials chart counts what the
    // log shows, and a refusal costs one round trip.
    const event = deniedEvent({
      at: new Date(this.now()),
      appId: input.app.appId,
      enterpriseId: enterprise?.id ?? lockEnterpriseId,
      product: input.product.crmProductId ?? input.product.productUri ?? '',
      code: Number(refusal.code),
    });
    await new AuditRepository(this.db).record(
      input.actor,
      [
        {
          action: 'lease.denied',
          subject: holder,
          enterprise,
          detail: {
            code: refusal.code,
            reason: refusal.message,
            holderKind: input.holder.kind,
            crmProductId: input.product.crmProductId ?? null,
            productUri: input.product.productUri ?? null,
            fingerprint: input.fingerprint,
          },
        },
      ],
      event,
    );
  }
}

/** A check-in of a lease that had already ended: its use, and when its seat is (or was) free. */
function endedCheckIn(state: LeaseState): CheckInAnswer {
  const freeAt = state.seatHeldUntil ?? state.endedAt ?? state.expiresAt;
  return { usedSeconds: Math.floor(state.usedMs / 1000), seatFreeAt: freeAt.getTime() };
}

/** What a call on an ended lease hears: expired, gone (checked in), or revoked with the reason. */
function endedLeaseError(endReason: string | null): KeywardError {
  if (endReason === 'expired') return leaseError(RuntimeCode.leaseExpired);
  if (endReason === 'checked_in') return leaseError(RuntimeCode.leaseNotFound);
  return revoked(endReason ?? 'ended');
}

function revoked(reason: string): KeywardError {
  return new KeywardError(
    RuntimeCode.leaseRevoked,
    fillMessage(runtimeMessages[RuntimeCode.leaseRevoked], reason),
  );
}

function revocationChange(leaseId: string, beat: Beat, reason: string): AuditChange {
  return {
    action: 'lease.revoked',
    subject: beat.assetNum,
    enterprise: beat.enterpriseId === null ? null : { id: beat.enterpriseId },
    detail: { leaseId, reason, holderKind: beat.holderKind, fingerprint: beat.fingerprint },
  };
}
