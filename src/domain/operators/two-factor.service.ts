import type { Db } from '../../db/client.js';
import { NO_REQUEST, operatorActor, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { sha256 } from '../shared/secrets.js';
import { CredentialGenerationRepository } from './credential-generation.repository.js';
import { OperatorCredentialsRepository } from './operator-credentials.repository.js';
import { OperatorsRepository } from './operators.repository.js';
import { OperatorConflictError, OperatorInputError, OperatorNotFoundError } from './operators.service.js';
import { newRecoveryCodes, newTotpSecret, normalRecoveryCode, totpStepOf, totpUri } from './totp.js';

/** What a second-factor code turned out to be. */
export type CodeVerdict =
  | 'totp'
  /** A recovery code, now spent. */
  | 'recovery'
  /** A code of a step already used: someone else may have seen it. */
  | 'reused'
  | 'wrong'
  /** The account's budget of wrong codes is spent: not judged. */
  | 'locked';

/**
 * Wrong second-factor codes one account may be given, from any session and address, in a window;
 * past it the account's second-factor step refuses every code for `lockSeconds`. Six digits and
 * five tries a quarter of an hour make a guess about one in 200,000 a day.
 */
export const SECOND_FACTOR_BUDGET = { tries: 5, windowSeconds: 15 * 60, lockSeconds: 15 * 60 } as const;

export interface TwoFactorStatus {
  enabled: boolean;
  recoveryCodesLeft: number;
  /** The owner requires two factors of everyone. */
  required: boolean;
}

const hashCode = (code: string) => sha256(`keyward-recovery:${normalRecoveryCode(code)}`);

/**
 * TOTP second factors (RFC 6238) and recovery codes of operators. A code is good once: the last
 * step accepted is kept, and a recovery code is spent by the one statement that finds it unspent.
 * Every change is audited naming who made it.
 */
export class TwoFactorService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async status(operatorId: string): Promise<TwoFactorStatus> {
    const credentials = new OperatorCredentialsRepository(this.db);
    const state = await credentials.stateOf(operatorId);
    if (!state) throw new OperatorNotFoundError(`no operator ${operatorId}`);
    return {
      enabled: state.totpEnabled,
      recoveryCodesLeft: state.totpEnabled ? await credentials.recoveryCodesLeft(operatorId) : 0,
      required: state.twoFactorRequired,
    };
  }

  /**
   * Starts an enrolment: a new secret, kept unconfirmed, and the URI its QR code shows. Starting
   * again replaces an unconfirmed secret; a confirmed one must be turned off first.
   */
  async begin(operatorId: string): Promise<{ secret: string; uri: string }> {
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operatorId);
    if (!state) throw new OperatorNotFoundError(`no operator ${operatorId}`);
    if (state.totpEnabled) throw new OperatorConflictError('two-factor sign-in is on already', 'twoFactorOn');
    const secret = newTotpSecret();
    await new OperatorCredentialsRepository(this.db).setPendingTotp(operatorId, secret);
    return { secret, uri: totpUri(secret, state.email) };
  }

  /** The unconfirmed enrolment's URI again (the page reloaded), or a new enrolment. */
  async pending(operatorId: string): Promise<{ secret: string; uri: string }> {
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operatorId);
    if (!state) throw new OperatorNotFoundError(`no operator ${operatorId}`);
    if (!state.totpEnabled && state.totpSecret !== null) {
      return { secret: state.totpSecret, uri: totpUri(state.totpSecret, state.email) };
    }
    return this.begin(operatorId);
  }

  /**
   * Confirms the enrolment with a code from the authenticator: two-factor sign-in is on, and ten
   * recovery codes are made, answered here once and kept only as hashes.
   */
  async confirm(
    operatorId: string,
    code: string,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<{ recoveryCodes: string[] }> {
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operatorId);
    if (!state) throw new OperatorNotFoundError(`no operator ${operatorId}`);
    if (state.totpEnabled) throw new OperatorConflictError('two-factor sign-in is on already', 'twoFactorOn');
    const secret = state.totpSecret;
    const step = secret === null ? null : totpStepOf(secret, code.trim(), this.now());
    if (secret === null || step === null)
      throw new OperatorInputError('code: not the code the app shows now', 'codeWrong');
    const recoveryCodes = newRecoveryCodes();
    const done = await this.db.transaction().execute(async (trx) => {
      const credentials = new OperatorCredentialsRepository(trx);
      if (!(await new OperatorsRepository(trx).lock(operatorId))) return false;
      if (!(await credentials.enableTotp(operatorId, secret, step))) return false;
      await credentials.replaceRecoveryCodes(operatorId, recoveryCodes.map(hashCode));
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'operator.two_factor_enabled',
          subject: state.email,
          enterprise: null,
          detail: { operatorId, recoveryCodes: recoveryCodes.length },
        },
      ]);
      return true;
    });
    if (!done)
      throw new OperatorConflictError('the enrolment changed meanwhile; start again', 'enrolmentChanged');
    return { recoveryCodes };
  }

  /**
   * A second factor at sign-in (or before a change that asks for one): a TOTP or recovery code.
   * Each try is counted on the account before it is judged, so parallel guesses share one
   * budget (SECOND_FACTOR_BUDGET); a right code forgives the count.
   */
  async check(operatorId: string, code: string, request: OperatorRequest = NO_REQUEST): Promise<CodeVerdict> {
    const credentials = new OperatorCredentialsRepository(this.db);
    const state = await credentials.stateOf(operatorId);
    if (!state?.totpEnabled || state.totpSecret === null) return 'wrong';
    const tries = await credentials.reserveSecondFactorTry(operatorId, SECOND_FACTOR_BUDGET.windowSeconds);
    if (tries === undefined) return 'locked';
    if (tries > SECOND_FACTOR_BUDGET.tries) {
      // The first try past the budget locks the step and says so in the audit log, once.
      if (tries === SECOND_FACTOR_BUDGET.tries + 1) await this.lock(state, request);
      return 'locked';
    }
    const verdict = await this.judge(state, code, request);
    if (verdict === 'totp' || verdict === 'recovery') await credentials.forgiveSecondFactorTries(operatorId);
    return verdict;
  }

  private async lock(state: { id: string; email: string }, request: OperatorRequest): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await new OperatorCredentialsRepository(trx).lockSecondFactor(
        state.id,
        SECOND_FACTOR_BUDGET.lockSeconds,
      );
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'operator.second_factor_locked',
          subject: state.email,
          enterprise: null,
          detail: {
            operatorId: state.id,
            tries: SECOND_FACTOR_BUDGET.tries,
            lockSeconds: SECOND_FACTOR_BUDGET.lockSeconds,
          },
        },
      ]);
    });
  }

  private async judge(
    state: { id: string; email: string; totpSecret: string | null },
    code: string,
    request: OperatorRequest,
  ): Promise<CodeVerdict> {
    const operatorId = state.id;
    const credentials = new OperatorCredentialsRepository(this.db);
    if (state.totpSecret === null) return 'wrong';
    const typed = code.trim();
    const step = totpStepOf(state.totpSecret, typed, this.now());
    if (step !== null) return (await credentials.acceptStep(operatorId, step)) ? 'totp' : 'reused';
    if (normalRecoveryCode(typed).length !== 10) return 'wrong';
    return this.db.transaction().execute(async (trx) => {
      if (!(await new OperatorCredentialsRepository(trx).useRecoveryCode(operatorId, hashCode(typed)))) {
        return 'wrong';
      }
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'operator.recovery_code_used',
          subject: state.email,
          enterprise: null,
          detail: { operatorId },
        },
      ]);
      return 'recovery';
    });
  }

  /** The operator turns it off, proving it with a code; not while the owner requires it. */
  async disable(operatorId: string, code: string, request: OperatorRequest = NO_REQUEST): Promise<void> {
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operatorId);
    if (!state) throw new OperatorNotFoundError(`no operator ${operatorId}`);
    if (state.twoFactorRequired)
      throw new OperatorConflictError('the owner requires two-factor sign-in', 'twoFactorRequired');
    const verdict = await this.check(operatorId, code, request);
    if (verdict === 'locked')
      throw new OperatorConflictError('code: too many wrong codes; try again later', 'codeLocked');
    if (verdict !== 'totp' && verdict !== 'recovery')
      throw new OperatorInputError('code: not a valid code', 'codeWrong');
    await this.clear(state, 'operator.two_factor_disabled', request);
  }

  /** An owner resets another's second factor (a lost phone): the next sign-in enrols again. */
  async reset(idOrEmail: string, request: OperatorRequest = NO_REQUEST): Promise<void> {
    const operator = await new OperatorsRepository(this.db).find(idOrEmail);
    if (!operator) throw new OperatorNotFoundError(`no operator ${idOrEmail}`);
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operator.id);
    if (!state) throw new OperatorNotFoundError(`no operator ${idOrEmail}`);
    await this.clear(state, 'operator.two_factor_reset', request);
  }

  private async clear(
    state: { id: string; email: string },
    action: 'operator.two_factor_disabled' | 'operator.two_factor_reset',
    request: OperatorRequest,
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await new OperatorCredentialsRepository(trx).clearTotp(state.id);
      // An owner's reset (a lost or stolen phone) ends every session the operator has open.
      if (action === 'operator.two_factor_reset')
        await new CredentialGenerationRepository(trx).endSessions(state.id);
      await new AuditRepository(trx).record(operatorActor(request), [
        { action, subject: state.email, enterprise: null, detail: { operatorId: state.id } },
      ]);
    });
  }

  async required(): Promise<boolean> {
    return new OperatorCredentialsRepository(this.db).twoFactorRequired();
  }

  /** The owner's rule for everyone: with it on, an operator without a second factor enrols at sign-in. */
  async setRequired(required: boolean, request: OperatorRequest = NO_REQUEST): Promise<void> {
    // An owner turning it on without a second factor would be sent to enrol by the next page:
    // asked to enrol first instead. The admin key names no one and has no second factor to have.
    const by = request.operatorId ?? null;
    if (required && by !== null && !(await this.status(by)).enabled) {
      throw new OperatorConflictError('turn on your own two-factor sign-in first', 'enrolFirst');
    }
    await this.db.transaction().execute(async (trx) => {
      await new OperatorCredentialsRepository(trx).setTwoFactorRequired(required);
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'platform.two_factor_required',
          subject: 'platform',
          enterprise: null,
          detail: { required },
        },
      ]);
    });
  }
}
