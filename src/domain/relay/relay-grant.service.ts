import { createHash, randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import type { Db } from '../../db/client.js';
import { RuntimeCode } from '../../errors/runtime-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { ActivationRepository } from '../activation/activation.repository.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { judgeStatic, seatLimit } from '../runtime/entitlement.js';
import { RuntimeRepository } from '../runtime/runtime.repository.js';
import { SeatSlotsRepository } from '../runtime/seat-slots.repository.js';
import {
  chargeShares,
  giveBackShares,
  holdSeats,
  invalid,
  shareLine,
  shareOf,
  sharesOf,
  type Hold,
} from './grant-holds.js';
import { termsSummaryOf } from './grant-terms.js';
import type { GrantedLicense, PoolGrantClaims } from './pool-grant.js';
import { RelayGrantsRepository, type GrantShare, type RelayGrantRow } from './relay-grants.repository.js';
import { RelayReportsRepository } from './relay-reports.repository.js';
import { verifyRelaySigned } from './relay-report.js';
import { unverifiedReturn, type RelayReturnClaims } from './relay-return.js';
import {
  codeRefusalOf,
  isTypedCode,
  peekReturnCode,
  RelayCodeError,
  relayGrantCode,
  requestTokenOfCode,
  returnTokenOfCode,
} from './relay-typed.js';
import {
  readRelayRequest,
  RELAY_MAX_SEATS,
  RelayRequestError,
  type RelayRequestClaims,
} from './relay-request.js';

/** Who signs grants: the runtime's current lease-signing key. */
export interface GrantSigner {
  signGrant(claims: PoolGrantClaims): Promise<{ token: string; kid: string }>;
}

/** What `POST /admin/relays/grants` answers. */
export interface RelayGrantAnswer {
  grantId: string;
  relayId: string;
  /** The pool grant, a compact JWS the relay imports (`keyward relay import`). */
  token: string;
  /** The same grant as a typed code, or null where it is too long to type (the file carries it). */
  code: string | null;
  machines: string[] | null;
  overage: PoolGrantClaims['overage'];
  startsAt: number;
  endsAt: number;
  licenses: GrantedLicense[];
  /** False when the same request was answered before: the same grant, nothing more held. */
  made: boolean;
}

/** A grant as the Relays pages list it, with its relay's newest imported report. */
export interface RelayGrantView {
  grantId: string;
  relayId: string;
  enterpriseId: number | null;
  licenses: GrantedLicense[];
  seats: number;
  /** The grant's terms: its machines (null: any) and overage allowance per product (0: refused). */
  machines: number | null;
  overage: number;
  startsAt: number;
  endsAt: number;
  createdAt: number;
  returnedAt: number | null;
  state: 'running' | 'ended' | 'returned';
  /**
   * The shares of usage limits the grant holds, each with what the relay had used of it by its
   * newest report of this grant (null: no report of it yet).
   */
  shares: GrantShareView[];
  lastReport: {
    reportId: string;
    issuedAt: number;
    importedAt: number;
    lastHour: number | null;
    peakSeats: number;
    overagePeak: number;
    seatHours: number;
    refused: number;
  } | null;
}

/**
 * What the vendor sets on a grant beyond the seats asked (docs/relay.md): the machines that may
 * check out from the relay (absent or null: any machine of its network), and the check-outs each
 * granted product may take past its seats, which the relay reports (0 or absent: refuse them).
 */
export interface GrantTermsInput {
  machines?: readonly string[] | null;
  overage?: number;
}

/** Machines one grant may list: a closed network's workstations, not a fleet. */
export const GRANT_MAX_MACHINES = 1000;
const MACHINE_FINGERPRINT = /^[\x21-\x7e]{8,256}$/;

/** The terms checked field by field, as the grant's claims carry them. */
export function grantTermsClaims(terms: GrantTermsInput): Pick<PoolGrantClaims, 'machines' | 'overage'> {
  const machines = terms.machines ?? null;
  if (machines !== null) {
    if (machines.length === 0 || machines.length > GRANT_MAX_MACHINES) {
      throw invalid(
        `machines: must list 1 to ${GRANT_MAX_MACHINES} fingerprints, or be left out for any machine`,
      );
    }
    const seen = new Set<string>();
    for (const [i, fingerprint] of machines.entries()) {
      if (!MACHINE_FINGERPRINT.test(fingerprint)) {
        throw invalid(
          `machines[${i}]: must be a machine's fingerprint, 8–256 printable ASCII characters, no spaces`,
        );
      }
      if (seen.has(fingerprint)) throw invalid(`machines[${i}]: lists ${fingerprint} twice`);
      seen.add(fingerprint);
    }
  }
  const overage = terms.overage ?? 0;
  if (!Number.isInteger(overage) || overage < 0 || overage > RELAY_MAX_SEATS) {
    throw invalid(`overage: must be a whole number of seats from 0 to ${RELAY_MAX_SEATS}`);
  }
  return {
    machines: machines === null ? null : [...machines],
    overage: overage === 0 ? { policy: 'refuse', seats: 0 } : { policy: 'allow', seats: overage },
  };
}

/** A grant's terms as the Relays pages list them. */
function termsOf(token: string): { machines: number | null; overage: number } {
  return termsSummaryOf(decodeJwt(token) as unknown as PoolGrantClaims);
}

/** Whether a grant made before has the terms asked now. */
function sameTerms(token: string, terms: Pick<PoolGrantClaims, 'machines' | 'overage'>): boolean {
  const held = decodeJwt(token) as unknown as PoolGrantClaims;
  return (
    JSON.stringify([held.machines ?? null, held.overage]) === JSON.stringify([terms.machines, terms.overage])
  );
}

/** A share of a license's usage limits a grant holds, and its use as last reported. */
export interface GrantShareView {
  assetNum: string;
  crmProductId: string;
  timeSeconds: number | null;
  amount: number | null;
  used: { timeSeconds: number | null; amount: number | null } | null;
}

/** Whose grants a call may touch: every enterprise's (the operator), or one enterprise's own. */
export interface RelayScope {
  enterpriseId?: number;
}

function inScope(enterpriseId: number | null, scope: RelayScope): boolean {
  return scope.enterpriseId === undefined || enterpriseId === scope.enterpriseId;
}

/** The same request answered by a concurrent call: its grant is answered instead. */
class AnsweredMeanwhile extends Error {}

/**
 * Pool grants (docs/relay.md): a relay's request turned into a grant signed by the vendor's
 * runtime key, holding at the vendor, until the grant's end, the seats it gives. The seats are
 * seat slots taken as a check-out takes them (SeatSlotsRepository), so online check-outs see them
 * as taken and no grant takes a seat a machine holds; a request is answered once.
 */
export class RelayGrantService {
  private readonly now: () => number;

  constructor(
    private readonly db: Db,
    private readonly deps: { signer: GrantSigner; now?: () => number },
  ) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * `scope.enterpriseId`: an enterprise administrator's grant (its console), of its own licenses
   * only; another enterprise's lock is answered as one that does not exist (DOMAIN.md §2).
   */
  async grant(
    text: string,
    actor: AuditActor,
    scope: RelayScope = {},
    terms: GrantTermsInput = {},
  ): Promise<RelayGrantAnswer> {
    const nowMs = this.now();
    const termClaims = grantTermsClaims(terms);
    let request: RelayRequestClaims;
    let token: string;
    try {
      // A typed code is the same signed request, rebuilt: the same request by file or by code.
      token = isTypedCode(text) ? await requestTokenOfCode(text) : text.trim();
      request = await readRelayRequest(token, Math.floor(nowMs / 1000));
    } catch (error) {
      if (error instanceof RelayCodeError) throw invalid(codeRefusalOf('request', error));
      if (error instanceof RelayRequestError) throw invalid(error.message);
      throw error;
    }
    const hash = createHash('sha256').update(token).digest('hex');
    const grants = new RelayGrantsRepository(this.db);
    const answered = await grants.byRequestHash(hash);
    if (answered !== undefined) {
      if (!inScope(answered.enterpriseId, scope))
        throw invalid('asks.licenses[0].assetNum: no lock has this number');
      if (!sameTerms(answered.token, termClaims)) {
        throw new KeywardError(
          RuntimeCode.validation,
          'request: was answered before with other machines or overage; a grant on new terms needs a new request (keyward relay init again)',
          { httpStatus: 409 },
        );
      }
      return answerOf(answered, false);
    }

    const { holds, enterpriseId } = await this.holdsFor(request, nowMs, scope);
    // Each product by its id, even where every product of a lock was asked: a relay's lease names
    // its product, and a verifier matches it against the grant exactly.
    const licenses: GrantedLicense[] = holds.map((h) => ({
      assetNum: h.candidate.assetNum,
      crmProductId: h.candidate.crmProductId,
      seats: h.asked,
      ...(h.timeSeconds === null ? {} : { timeSeconds: h.timeSeconds }),
      ...(h.amount === null ? {} : { amount: h.amount }),
    }));
    // A grant never outlives a license it gives seats of.
    const ends = Math.min(
      request.asks.until * 1000,
      ...holds.map((h) => h.candidate.endsAt ?? Number.POSITIVE_INFINITY),
    );
    const id = randomUUID();
    const seconds = Math.floor(nowMs / 1000);
    const claims: PoolGrantClaims = {
      iss: 'keyward',
      sub: request.sub,
      jti: id,
      iat: seconds,
      nbf: seconds,
      exp: Math.floor(ends / 1000),
      relay: { key: request.relay.key, fingerprint: request.relay.fingerprint },
      licenses,
      ...termClaims,
    };
    const signed = await this.deps.signer.signGrant(claims);
    const row: RelayGrantRow = {
      id,
      relayId: request.sub,
      relayKid: request.relay.key.kid,
      fingerprint: request.relay.fingerprint,
      licenses,
      token: signed.token,
      startsAt: new Date(seconds * 1000),
      endsAt: new Date(claims.exp * 1000),
      createdAt: new Date(nowMs),
      enterpriseId,
      returnedAt: null,
      shares: sharesOf(holds),
    };
    try {
      await this.db.transaction().execute(async (trx) => {
        if (!(await new RelayGrantsRepository(trx).insert(row, hash))) throw new AnsweredMeanwhile();
        await holdSeats(trx, holds, row, new Date(nowMs));
        await chargeShares(trx, holds, new Date(nowMs));
        await new AuditRepository(trx).record(actor, [
          {
            action: 'relay.granted',
            subject: request.sub,
            enterprise: enterpriseId === null ? null : { id: enterpriseId },
            detail: {
              grantId: id,
              licenses: licenses.map((l) => `${l.assetNum}/${l.crmProductId ?? '*'}=${l.seats}`),
              endsAt: row.endsAt.toISOString(),
              machines: termClaims.machines?.length ?? null,
              overage: termClaims.overage.seats,
              ...(row.shares.length === 0 ? {} : { shares: row.shares.map(shareLine) }),
            },
          },
        ]);
      });
    } catch (error) {
      if (!(error instanceof AnsweredMeanwhile)) throw error;
      const meanwhile = await grants.byRequestHash(hash);
      if (meanwhile === undefined) throw error;
      return answerOf(meanwhile, false);
    }
    return answerOf(row, true);
  }

  /**
   * A relay's signed return (`keyward relay import-return`): its grant ends now, and the seats it
   * held at the vendor are free to online check-outs at once. Checked with the relay key the grant
   * certified; the same return again changes nothing (`made: false`).
   */
  async acceptReturn(
    text: string,
    actor: AuditActor,
    scope: RelayScope = {},
  ): Promise<{
    grantId: string;
    relayId: string;
    returnedAt: number;
    made: boolean;
    /** What went back to each license of the shares of usage limits the grant held (made only). */
    givenBack: Array<Omit<GrantShare, 'productId'>>;
  }> {
    let token: string;
    let claims: RelayReturnClaims;
    try {
      ({ token, claims } = unverifiedReturn(await this.returnToken(text, scope)));
    } catch (error) {
      if (error instanceof RelayCodeError) throw invalid(codeRefusalOf('return', error));
      if (error instanceof RelayRequestError) throw invalid(error.message);
      throw error;
    }
    const grant = await new RelayGrantsRepository(this.db).byId(claims.grant);
    if (grant === undefined || grant.relayId !== claims.sub || !inScope(grant.enterpriseId, scope)) {
      throw new KeywardError(
        RuntimeCode.validation,
        `grant: ${claims.grant} is not a grant of relay ${claims.sub}`,
        {
          httpStatus: 404,
        },
      );
    }
    const granted = decodeJwt(grant.token) as unknown as PoolGrantClaims;
    try {
      await verifyRelaySigned(token, granted.relay.key, 'return');
    } catch (error) {
      if (error instanceof RelayRequestError) throw invalid(error.message);
      throw error;
    }
    const now = new Date(this.now());
    const givenBack: GrantShare[] = [];
    const made = await this.db.transaction().execute(async (trx) => {
      if (!(await new RelayGrantsRepository(trx).markReturned(grant.id, now))) return false;
      const released = await new SeatSlotsRepository(trx).releaseGrant(`grant:${grant.id}`, now);
      const refunded = await giveBackShares(trx, grant.shares, claims.used ?? []);
      givenBack.push(...refunded);
      await new AuditRepository(trx).record(actor, [
        {
          action: 'relay.returned',
          subject: grant.relayId,
          enterprise: grant.enterpriseId === null ? null : { id: grant.enterpriseId },
          detail: {
            grantId: grant.id,
            returnId: claims.jti,
            seatsFreed: released,
            ...(refunded.length === 0 ? {} : { sharesGivenBack: refunded.map(shareLine) }),
          },
        },
      ]);
      return true;
    });
    const returned = made
      ? now
      : ((await new RelayGrantsRepository(this.db).byId(grant.id))?.returnedAt ?? now);
    return {
      grantId: grant.id,
      relayId: grant.relayId,
      returnedAt: returned.getTime(),
      made,
      givenBack: givenBack.map(({ productId: _productId, ...share }) => share),
    };
  }

  /**
   * A return's compact JWS, from its file's text or its typed code: a code names its grant, whose
   * relay key's kid the rebuilt header needs (an unknown grant rebuilds with none, and is refused
   * as unknown below).
   */
  private async returnToken(text: string, scope: RelayScope): Promise<string> {
    if (!isTypedCode(text)) return text;
    const { grantId } = peekReturnCode(text);
    const grant = await new RelayGrantsRepository(this.db).byId(grantId);
    const kid = grant !== undefined && inScope(grant.enterpriseId, scope) ? grant.relayKid : '';
    return returnTokenOfCode(text, kid);
  }

  /**
   * The newest grants, with each relay's newest report: every enterprise's for the operator, one
   * enterprise's own for its administrator.
   */
  async list(filter: { enterpriseId?: number; limit?: number } = {}): Promise<RelayGrantView[]> {
    const rows = await new RelayGrantsRepository(this.db).recent({
      ...(filter.enterpriseId === undefined ? {} : { enterpriseId: filter.enterpriseId }),
      limit: filter.limit ?? 100,
    });
    const reports = await new RelayReportsRepository(this.db).latestOf([
      ...new Set(rows.map((r) => r.relayId)),
    ]);
    const now = this.now();
    return rows.map((row) => {
      const report = reports.get(row.relayId);
      return {
        grantId: row.id,
        relayId: row.relayId,
        enterpriseId: row.enterpriseId,
        licenses: row.licenses,
        seats: row.licenses.reduce((sum, l) => sum + l.seats, 0),
        ...termsOf(row.token),
        startsAt: row.startsAt.getTime(),
        endsAt: row.endsAt.getTime(),
        createdAt: row.createdAt.getTime(),
        returnedAt: row.returnedAt?.getTime() ?? null,
        state: row.returnedAt !== null ? 'returned' : row.endsAt.getTime() <= now ? 'ended' : 'running',
        shares: row.shares.map((share) => {
          const said =
            report?.grantId === row.id
              ? report.used.find(
                  (u) => u.assetNum === share.assetNum && u.crmProductId === share.crmProductId,
                )
              : undefined;
          return {
            assetNum: share.assetNum,
            crmProductId: share.crmProductId,
            timeSeconds: share.timeSeconds,
            amount: share.amount,
            used:
              said === undefined
                ? null
                : { timeSeconds: said.timeSeconds ?? null, amount: said.amount ?? null },
          };
        }),
        lastReport:
          report === undefined
            ? null
            : {
                reportId: report.id,
                issuedAt: report.issuedAt.getTime(),
                importedAt: report.importedAt.getTime(),
                lastHour: report.lastHour?.getTime() ?? null,
                peakSeats: report.peakSeats,
                overagePeak: report.overagePeak,
                seatHours: Math.round(report.seatMs / 36_000) / 100,
                refused: report.refused,
              },
      };
    });
  }

  /** The product instances each ask names, judged as a check-out judges them, with their seats. */
  private async holdsFor(
    request: RelayRequestClaims,
    nowMs: number,
    scope: RelayScope,
  ): Promise<{ holds: Hold[]; enterpriseId: number | null }> {
    const owners = new ActivationRepository(this.db);
    const runtime = new RuntimeRepository(this.db);
    const holds: Hold[] = [];
    let enterpriseId: number | null = null;
    for (const [i, ask] of request.asks.licenses.entries()) {
      const field = `asks.licenses[${i}]`;
      const owner = await owners.lockOwner(ask.assetNum);
      if (owner?.channelCode == null || !inScope(owner.enterpriseId, scope)) {
        throw invalid(`${field}.assetNum: no lock has this number`);
      }
      // A relay serves one closed network: one enterprise's licenses.
      if (i > 0 && owner.enterpriseId !== enterpriseId) {
        throw invalid(`${field}.assetNum: belongs to another enterprise than asks.licenses[0]`);
      }
      enterpriseId = owner.enterpriseId;
      const found = await runtime.lockCandidates(
        ask.assetNum,
        [owner.channelCode],
        ask.crmProductId === null ? {} : { crmProductId: ask.crmProductId },
      );
      const candidates = (found?.candidates ?? []).filter((c) => c.pool === 'own');
      if (candidates.length === 0) {
        throw invalid(
          ask.crmProductId === null
            ? `${field}.assetNum: the lock runs no product`
            : `${field}.crmProductId: the lock runs no such product`,
        );
      }
      for (const candidate of candidates) {
        const refusal = judgeStatic(candidate, nowMs);
        if (refusal !== undefined) {
          throw invalid(`${field}: ${candidate.crmProductId} cannot be granted now: ${refusal.message}`);
        }
        const seats = seatLimit(candidate);
        if (seats !== null && ask.seats > seats) {
          throw new KeywardError(
            RuntimeCode.seatsInUse,
            `${field}.seats: ${candidate.crmProductId} has ${seats} seats in all; ${ask.seats} asked`,
            { httpStatus: 409 },
          );
        }
        holds.push({
          candidate,
          seats: seats === null ? 0 : ask.seats,
          asked: ask.seats,
          timeSeconds: shareOf(
            candidate.limitTimeDuration,
            ask.timeSeconds,
            `${field}.timeSeconds`,
            candidate,
          ),
          amount: shareOf(candidate.limitAmount, ask.amount, `${field}.amount`, candidate),
          field,
        });
      }
      const asked = holds.slice(-candidates.length);
      if (ask.timeSeconds !== undefined && asked.every((h) => h.timeSeconds === null)) {
        throw invalid(`${field}.timeSeconds: no product asked has a time limit to share`);
      }
      if (ask.amount !== undefined && asked.every((h) => h.amount === null)) {
        throw invalid(`${field}.amount: no product asked has an amount limit to share`);
      }
    }
    return { holds, enterpriseId };
  }
}

function answerOf(row: RelayGrantRow, made: boolean): RelayGrantAnswer {
  const claims = decodeJwt(row.token) as unknown as PoolGrantClaims;
  return {
    grantId: row.id,
    relayId: row.relayId,
    token: row.token,
    code: relayGrantCode(row.token),
    machines: claims.machines ?? null,
    overage: claims.overage,
    startsAt: row.startsAt.getTime(),
    endsAt: row.endsAt.getTime(),
    licenses: row.licenses,
    made,
  };
}
