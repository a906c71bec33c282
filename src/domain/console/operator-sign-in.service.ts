import type { Db } from '../../db/client.js';
import { operatorActor, type RequestIds } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import type { TokenRequestLimits } from '../gate/token-limits.js';
import type { LoginService } from '../members/login.service.js';
import { OPERATOR_PASSWORD_LANE } from '../members/login.service.js';
import { CredentialGenerationRepository } from '../operators/credential-generation.repository.js';
import { OperatorCredentialsRepository } from '../operators/operator-credentials.repository.js';
import { OperatorInputError } from '../operators/operators.service.js';
import type { TwoFactorService } from '../operators/two-factor.service.js';
import { hashPassword, verifyPassword } from '../shared/passwords.js';
import { randomSecret, sha256 } from '../shared/secrets.js';
import { CONSOLE_SESSION_LIMITS, type ConsoleOperator } from './console-sessions.service.js';
import { ConsoleSessionsRepository } from './console-sessions.repository.js';

/** The key the operator console's sign-ins are counted under in the token endpoint's limits. */
const OPERATOR_CONSOLE_CLIENT = 'keyward-operator-console';

/** Wrong second-factor codes one session may give before it ends and sign-in starts again. */
export const SECOND_FACTOR_TRIES = 5;

/** Operators' own passwords: long enough for a passphrase, short enough to hash at once. */
export const OPERATOR_PASSWORD = { min: 12, max: 200 } as const;

export type OperatorSignIn =
  | { status: 'ok'; secret: string; secondFactor: boolean }
  | { status: 'refused' }
  | { status: 'locked' }
  | { status: 'limited'; retryAfterSeconds: number };

export type SecondFactorOutcome =
  | { status: 'ok'; via: 'totp' | 'recovery' }
  | { status: 'wrong' | 'reused'; triesLeft: number }
  /** Too many wrong codes on this session: the session is gone. */
  | { status: 'ended' }
  /** Too many wrong codes on the account, from any session: locked a while, this session gone. */
  | { status: 'locked' };

type From = { ip: string } & RequestIds;

/**
 * An operator's console sign-in by email and password (members' lockout rules, the token
 * endpoint's rate limits), then the second factor when enrolled; single sign-on opens a session
 * for an operator its provider vouched for. Sign-ins and failures are audited.
 */
export class OperatorSignInService {
  constructor(
    private readonly db: Db,
    private readonly deps: {
      login: LoginService;
      tokenLimits: TokenRequestLimits;
      twoFactor: TwoFactorService;
    },
    private readonly limits = CONSOLE_SESSION_LIMITS,
  ) {}

  async signIn(email: string, password: string, from: From): Promise<OperatorSignIn> {
    const admission = await this.deps.tokenLimits.admit(from.ip, OPERATOR_CONSOLE_CLIENT);
    if (admission.limited) return { status: 'limited', retryAfterSeconds: admission.retryAfterSeconds };
    const credentials = new OperatorCredentialsRepository(this.db);
    // The generation is read before the password is judged: a reset landing meanwhile moves it
    // on, and the session opened with the old password is born ended.
    let generation: number | undefined;
    const outcome = await this.deps.login.verifyOperator(email, password, from, async (e) => {
      const found = await credentials.passwordOf(e);
      generation = found?.generation;
      return found;
    });
    if (outcome.status !== 'ok') {
      if (outcome.status === 'refused') await this.deps.tokenLimits.failed(from.ip, OPERATOR_CONSOLE_CLIENT);
      if (outcome.status === 'refused') await this.recordFailure(email, from);
      return outcome;
    }
    const state = await credentials.stateOf(outcome.memberId);
    if (state?.status !== 'active' || generation === undefined) return { status: 'refused' };
    const secret = await this.open({ ...state, generation }, 'password', state.totpEnabled, from);
    return { status: 'ok', secret, secondFactor: state.totpEnabled };
  }

  /**
   * Opens a session for an operator single sign-on vouched for (the caller mapped the provider's
   * user to `operatorId` and checked the operator is active).
   */
  async openSso(operatorId: string, from: RequestIds): Promise<string | undefined> {
    const state = await new OperatorCredentialsRepository(this.db).stateOf(operatorId);
    if (state?.status !== 'active') return undefined;
    return this.open(state, 'sso', false, from);
  }

  /** The code a password session owes: the session is whole once it is right. */
  async giveSecondFactor(
    secret: string,
    operator: ConsoleOperator,
    code: string,
    from: RequestIds,
  ): Promise<SecondFactorOutcome> {
    if (operator.id === null) return { status: 'ended' };
    const sessions = new ConsoleSessionsRepository(this.db);
    const request = { ...from, operator: operator.name, operatorId: operator.id };
    const verdict = await this.deps.twoFactor.check(operator.id, code, request);
    if (verdict === 'totp' || verdict === 'recovery') {
      await sessions.secondFactorGiven(sha256(secret), verdict);
      await this.signedIn(operator, 'password', from);
      return { status: 'ok', via: verdict };
    }
    if (verdict === 'locked') {
      // The account's budget of wrong codes is spent: this sign-in ends, and so does any other
      // that waits for a code, until the lock lifts.
      await sessions.delete(sha256(secret));
      return { status: 'locked' };
    }
    const failures = await sessions.secondFactorFailed(sha256(secret));
    await this.auditFailure({ id: operator.id, email: operator.email ?? operator.id }, from, 'second-factor');
    if (failures >= SECOND_FACTOR_TRIES) {
      await sessions.delete(sha256(secret));
      return { status: 'ended' };
    }
    return { status: verdict, triesLeft: SECOND_FACTOR_TRIES - failures };
  }

  /**
   * The operator's own new password. `current` is asked for unless this session owes a new one
   * (it was opened with the one-time password): no other session may skip it, whatever the
   * operator's state. Every other session of the operator ends.
   */
  async changePassword(
    secret: string,
    operator: ConsoleOperator,
    input: { current: string | null; next: string },
    from: RequestIds,
  ): Promise<void> {
    if (operator.id === null) throw new OperatorInputError('password: the admin key has no password');
    const { next } = input;
    if (next.length < OPERATOR_PASSWORD.min || next.length > OPERATOR_PASSWORD.max) {
      throw new OperatorInputError(
        `password: ${OPERATOR_PASSWORD.min} to ${OPERATOR_PASSWORD.max} characters`,
        'passwordLength',
      );
    }
    const credentials = new OperatorCredentialsRepository(this.db);
    const owed = await new ConsoleSessionsRepository(this.db).owesPasswordChange(sha256(secret));
    if (input.current === null && !owed)
      throw new OperatorInputError('currentPassword: not your current password', 'currentPassword');
    if (input.current !== null) {
      const stored = operator.email === null ? undefined : await credentials.passwordOf(operator.email);
      const right =
        stored?.passwordHash != null &&
        (await verifyPassword(stored.passwordHash, input.current, OPERATOR_PASSWORD_LANE));
      if (!right)
        throw new OperatorInputError('currentPassword: not your current password', 'currentPassword');
    }
    const passwordHash = await hashPassword(next, OPERATOR_PASSWORD_LANE);
    const id = operator.id;
    await this.db.transaction().execute(async (trx) => {
      await new OperatorCredentialsRepository(trx).setOwnPassword(id, passwordHash);
      await new ConsoleSessionsRepository(trx).passwordChanged(sha256(secret));
      await new CredentialGenerationRepository(trx).endSessions(id, sha256(secret));
      await new AuditRepository(trx).record(
        operatorActor({ ...from, operator: operator.name, operatorId: id }),
        [
          {
            action: 'operator.password_changed',
            subject: operator.email ?? id,
            enterprise: null,
            detail: { operatorId: id },
          },
        ],
      );
    });
  }

  private async open(
    state: { id: string; name: string; email: string; mustChangePassword: boolean; generation: number },
    method: 'password' | 'sso',
    pendingSecondFactor: boolean,
    from: RequestIds,
  ): Promise<string> {
    const secret = randomSecret();
    await new ConsoleSessionsRepository(this.db).insert({
      idHash: sha256(secret),
      kind: 'operator',
      tokenHash: null,
      expiresAt: new Date(Date.now() + this.limits.absoluteSeconds * 1000),
      operatorId: state.id,
      operatorGeneration: state.generation,
      method,
      pendingSecondFactor,
      // Signed in with the one-time password: this session owes the new one.
      owesPasswordChange: method === 'password' && state.mustChangePassword,
    });
    if (!pendingSecondFactor)
      await this.signedIn({ id: state.id, name: state.name, email: state.email }, method, from);
    return secret;
  }

  private async signedIn(
    operator: { id: string | null; name: string; email: string | null },
    method: 'password' | 'sso',
    from: RequestIds,
  ): Promise<void> {
    if (operator.id === null) return;
    const id = operator.id;
    await this.db.transaction().execute(async (trx) => {
      await new OperatorCredentialsRepository(trx).markSignedIn(id);
      await new AuditRepository(trx).record(
        operatorActor({ ...from, operator: operator.name, operatorId: id }),
        [
          {
            action: 'operator.signed_in',
            subject: operator.email ?? id,
            enterprise: null,
            detail: { operatorId: id, method },
          },
        ],
      );
    });
  }

  /** A failure on an existing operator is audited; an unknown email leaves no row to flood the log. */
  private async recordFailure(email: string, from: RequestIds): Promise<void> {
    const known = await new OperatorCredentialsRepository(this.db).passwordOf(email.trim());
    if (known) await this.auditFailure({ id: known.id, email: email.trim() }, from, 'password');
  }

  private async auditFailure(
    operator: { id: string; email: string },
    from: RequestIds,
    stage: 'password' | 'second-factor',
  ): Promise<void> {
    await new AuditRepository(this.db).record(operatorActor({ ...from, operator: operator.email }), [
      {
        action: 'operator.sign_in_failed',
        subject: operator.email,
        enterprise: null,
        detail: { operatorId: operator.id, stage },
      },
    ]);
  }
}
