import { decodeJwt } from 'jose';
import type { Db } from '../../db/client.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { RuntimeCode, runtimeMessages } from '../../errors/runtime-codes.js';
import {
  ActivationFormatError,
  activatedFingerprint,
  bindingOf,
  bytesOfTyped,
  decodeReturnCode,
  encodeTyped,
  encodeTypedLeaseBody,
  LEASE_EXP_BOUNDS,
  kidPrefixOf,
  nonceText,
  readActivationRequest,
  typedLeaseSigningInput,
  type ActivationAnswerFile,
  type ActivationRequest,
  type LeaseExpBound,
} from '../../keyward-client.js';
import { AppsRepository } from '../apps/apps.repository.js';
import type { AuditActor } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import type { LeaseSigner } from '../runtime/lease-claims.js';
import type { RuntimeApp, RuntimeService } from '../runtime/runtime.service.js';
import type { UserTokenGrant } from '../tokens/tokens.repository.js';
import { ActivationRepository, type ActivationVia, type OfflineMachine } from './activation.repository.js';

/** Who turns a request into a lease, and within what: everything an online check-out holds to. */
export type ActivationBy =
  /** An enterprise administrator in the console: locks of his enterprise only. */
  | { via: 'console'; enterpriseId: number; actor: AuditActor }
  /** The operator, in the console or through the admin API (`keyward leases activate`). */
  | { via: 'operator' | 'admin'; actor: AuditActor }
  /** A connected machine of the same enterprise: its app (the request's) and a member's token. */
  | { via: 'runtime'; app: RuntimeApp; member: UserTokenGrant; actor: AuditActor };

export interface ActivationAnswer {
  leaseId: string;
  appKey: string;
  assetNum: string;
  crmProductId: string;
  days: number;
  /** Epoch milliseconds: the lease's expiry, when its seat is free. */
  expiresAt: number;
  expBound: LeaseExpBound;
  /** The signed lease (JWS), for the answer file. */
  lease: string;
  /** The typed form, for a person to type in. */
  code: string;
  file: ActivationAnswerFile;
}

/** A request longer than this is no request of an SDK's. */
export const ACTIVATION_TEXT_LIMIT = 4096;
/** How old a request may be: a machine's request older than this is asked for again. */
export const REQUEST_MAX_AGE_DAYS = 30;
const DAY = 86_400;

const invalid = (message: string) => new KeywardError(RuntimeCode.validation, message, { cause: message });

function parse(text: string, field: 'request' | 'code'): string {
  if (text.length > ACTIVATION_TEXT_LIMIT) {
    throw invalid(`${field}: longer than ${ACTIVATION_TEXT_LIMIT} characters; no activation ${field} is`);
  }
  if (text.trim() === '') throw invalid(`${field}: is empty`);
  return text;
}

const EXP_BOUND_INDEX: Record<LeaseExpBound, number> = {
  'offline-days': 0,
  'license-end': 1,
  'time-duration': 2,
};

/**
 * Offline activation (docs/activation.md): a request a machine without network wrote, turned into
 * a lease by whoever can reach Keyward, under every rule of an online check-out (the runtime's own
 * check-out does it: seats, dates, the app's offline maximum), audited and raising a webhook event.
 * The answer is the signed lease and its typed form; a request is answered once.
 */
export class ActivationService {
  constructor(
    private readonly db: Db,
    private readonly deps: {
      runtime: RuntimeService;
      signer: LeaseSigner;
      /** On a relay: its answers would need a typed code it cannot sign (docs/relay.md). */
      onRelay?: boolean;
      now?: () => number;
    },
  ) {}

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }

  async activate(text: string, by: ActivationBy): Promise<ActivationAnswer> {
    if (this.deps.onRelay === true) {
      throw invalid(
        "request: a relay does not answer offline activations: its machines check out online, or the vendor's Keyward answers",
      );
    }
    let request: ActivationRequest;
    try {
      request = readActivationRequest(parse(text, 'request'));
    } catch (error) {
      if (error instanceof ActivationFormatError) throw invalid(`request: ${error.message}`);
      throw error;
    }
    const nowSeconds = Math.floor(this.now() / 1000);
    if (request.createdAt < nowSeconds - REQUEST_MAX_AGE_DAYS * DAY) {
      throw invalid(
        `request: made more than ${REQUEST_MAX_AGE_DAYS} days ago; ask the machine for a new one`,
      );
    }
    if (request.createdAt > nowSeconds + DAY) throw invalid('request: dated in the future');

    const app = await new AppsRepository(this.db).findByKey(request.appKey);
    if (app === undefined || app.status !== 'active' || !app.scopes.includes('auth_runtime')) {
      throw invalid('request: its application cannot activate (unknown, disabled or without auth_runtime)');
    }
    if (by.via === 'runtime' && by.app.appId !== app.id) throw invalid('request: is for another application');

    const repository = new ActivationRepository(this.db);
    // Another enterprise's lock is answered as one that does not exist (DOMAIN.md §2).
    const owner = await repository.lockOwner(request.assetNum);
    const enterpriseOf =
      by.via === 'console' ? by.enterpriseId : by.via === 'runtime' ? by.member.enterpriseId : undefined;
    if (enterpriseOf !== undefined && owner?.enterpriseId !== enterpriseOf) {
      throw new KeywardError(RuntimeCode.notEntitled, runtimeMessages[RuntimeCode.notEntitled]);
    }
    const nonce = nonceText(request.nonce);
    await this.refuseReplay(repository, app.id, nonce);

    const fingerprint = activatedFingerprint(request.fingerprintHash);
    const lease = await this.deps.runtime.checkOut({
      app: { appId: app.id, appKey: app.appKey, channels: app.channels },
      holder: { kind: 'lock', assetNum: request.assetNum },
      fingerprint,
      product: { crmProductId: request.crmProductId },
      offlineDays: request.days,
      activationNonce: nonce,
      actor: by.actor,
    });
    const token = lease.offlineLease ?? '';
    const claims = decodeJwt(token);
    const expBound = (LEASE_EXP_BOUNDS as readonly string[]).includes(String(claims.expBound))
      ? (claims.expBound as LeaseExpBound)
      : 'offline-days';
    const code = await this.typedLease(
      request,
      lease.leaseId,
      Number(claims.iat),
      Number(claims.exp),
      expBound,
    );

    await this.db.transaction().execute(async (trx) => {
      const recorded = await new ActivationRepository(trx).insert({
        app_id: app.id,
        nonce,
        lease_id: lease.leaseId,
        enterprise_id: owner?.enterpriseId ?? null,
        asset_num: request.assetNum,
        crm_product_id: request.crmProductId,
        days: request.days,
        fingerprint_hash: fingerprint,
        via: by.via,
      });
      // The same request answered by someone else a moment ago: this one changes nothing more.
      if (!recorded) await this.refuseReplay(new ActivationRepository(trx), app.id, nonce);
      await new AuditRepository(trx).record(by.actor, [
        {
          action: 'lease.activated',
          subject: request.assetNum,
          enterprise: owner?.enterpriseId == null ? null : { id: owner.enterpriseId },
          detail: {
            appId: app.id,
            leaseId: lease.leaseId,
            crmProductId: request.crmProductId,
            appKey: app.appKey,
            days: request.days,
            expiresAt: new Date(lease.expiresAt).toISOString(),
            via: by.via,
            fingerprint,
          },
        },
      ]);
    });
    const file: ActivationAnswerFile = {
      keyward: 'activation-answer',
      version: 1,
      leaseId: lease.leaseId,
      lease: token,
      code,
      expiresAt: new Date(lease.expiresAt).toISOString(),
    };
    return {
      leaseId: lease.leaseId,
      appKey: app.appKey,
      assetNum: request.assetNum,
      crmProductId: request.crmProductId,
      days: request.days,
      expiresAt: lease.expiresAt,
      expBound,
      lease: token,
      code,
      file,
    };
  }

  private async refuseReplay(repository: ActivationRepository, appId: string, nonce: string): Promise<void> {
    const answered = await repository.findByNonce(appId, nonce);
    if (answered === undefined) return;
    const when = answered.createdAt.toISOString();
    throw new KeywardError(
      RuntimeCode.alreadyActivated,
      `this activation request was already answered (lease ${answered.leaseId}, at ${when}); a machine makes a new request for a new activation`,
    );
  }

  /** The typed answer: the essential claims in their fixed layout, signed with the lease's key. */
  private async typedLease(
    request: ActivationRequest,
    leaseId: string,
    issuedAt: number,
    expiresAt: number,
    expBound: LeaseExpBound,
  ): Promise<string> {
    const binding = await bindingOf(request);
    let body: Uint8Array = new Uint8Array();
    const { signature } = await this.deps.signer.signBytes(async (kid) => {
      body = encodeTypedLeaseBody({
        kidPrefix: kidPrefixOf(kid),
        leaseId,
        issuedAt,
        expiresAt,
        expBound: EXP_BOUND_INDEX[expBound],
        nonce: request.nonce,
        fingerprintHash: request.fingerprintHash,
        binding,
      });
      return typedLeaseSigningInput(body);
    });
    const whole = new Uint8Array(body.length + signature.length);
    whole.set(body);
    whole.set(signature, body.length);
    return encodeTyped(whole);
  }

  /**
   * A machine's early return: the code it wrote when it deleted its activated lease. Honoured only
   * where the lease's app allows early return; frees the seat and is audited.
   */
  async returnEarly(text: string, by: ActivationBy): Promise<{ leaseId: string; assetNum: string }> {
    let code: ReturnType<typeof decodeReturnCode>;
    try {
      code = decodeReturnCode(bytesOfTyped(parse(text, 'code')));
    } catch (error) {
      if (error instanceof ActivationFormatError) throw invalid(`code: ${error.message}`);
      throw error;
    }
    const repository = new ActivationRepository(this.db);
    const record = await repository.findByLease(code.leaseId, nonceText(code.nonce));
    const fingerprint = activatedFingerprint(code.fingerprintHash);
    const inScope =
      record !== undefined &&
      record.fingerprintHash === fingerprint &&
      (by.via === 'console'
        ? record.enterpriseId === by.enterpriseId
        : by.via === 'runtime'
          ? record.appId === by.app.appId && record.enterpriseId === by.member.enterpriseId
          : true);
    if (!inScope)
      throw new KeywardError(RuntimeCode.leaseNotFound, runtimeMessages[RuntimeCode.leaseNotFound]);
    if (record.returnedAt !== null) return { leaseId: record.leaseId, assetNum: record.assetNum };
    const app = { appId: record.appId, appKey: record.appKey, channels: [] };
    if (!record.offlineEarlyReturn) {
      throw new KeywardError(
        RuntimeCode.earlyReturnNotAllowed,
        `${record.appKey} does not allow early return: the seat stays held until the lease expires`,
      );
    }
    await this.deps.runtime.checkIn({ app, leaseId: record.leaseId, fingerprint });
    await this.db.transaction().execute(async (trx) => {
      await new ActivationRepository(trx).markReturned(record.leaseId, nonceText(code.nonce));
      await new AuditRepository(trx).record(by.actor, [
        {
          action: 'lease.returned',
          subject: record.assetNum,
          enterprise: record.enterpriseId === null ? null : { id: record.enterpriseId },
          detail: { appId: record.appId, leaseId: record.leaseId, appKey: record.appKey, via: by.via },
        },
      ]);
    });
    return { leaseId: record.leaseId, assetNum: record.assetNum };
  }

  /** The machines holding a seat by an offline lease: all, or one enterprise's. */
  async offlineMachines(filter: { enterpriseId?: number; limit?: number } = {}): Promise<OfflineMachine[]> {
    return new ActivationRepository(this.db).offlineMachines({ ...filter, limit: filter.limit ?? 200 });
  }
}

export type { ActivationVia };
