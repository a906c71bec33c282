import { createHash } from 'node:crypto';
import type { Db } from '../../db/client.js';
import { AppsRepository } from '../apps/apps.repository.js';
import type { AuditActor, RequestIds } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import type { TokenRequestLimits } from '../gate/token-limits.js';
import type { LoginService } from '../members/login.service.js';
import { randomSecret, sha256 } from '../shared/secrets.js';
import { TokensRepository, type UserTokenGrant } from '../tokens/tokens.repository.js';
import type { TokensService } from '../tokens/tokens.service.js';
import { CONSOLE_CLIENT_KEY, CONSOLE_OPERATOR } from './console-client.js';
import { ConsoleSessionsRepository, type SessionRow } from './console-sessions.repository.js';
import type { OperatorRole, SecondFactorKind, SignInMethod } from '../../db/schema.js';
import {
  OperatorCredentialsRepository,
  type SignInState,
} from '../operators/operator-credentials.repository.js';

/** A session ends after this long without a page, and in any case this long after sign-in. */
export const CONSOLE_SESSION_LIMITS = { idleSeconds: 30 * 60, absoluteSeconds: 12 * 60 * 60 };

/** Who an operator session speaks for: a named operator, or (id null) the admin key. */
export interface ConsoleOperator {
  id: string | null;
  name: string;
  email: string | null;
  role: OperatorRole;
  method: SignInMethod;
  /** The second factor given after the password, if one was. */
  secondFactor: SecondFactorKind | null;
}

/**
 * Where an operator's sign-in stands: `ready`, or the step still owed: the second factor, a new
 * password in place of a one-time one, or enrolling a second factor the owner requires.
 */
export type SignInStep = 'ready' | 'second-factor' | 'password' | 'enrol';

export type ConsoleSession =
  | { kind: 'operator'; csrf: string; operator: ConsoleOperator; step: SignInStep }
  | { kind: 'enterprise'; csrf: string; member: UserTokenGrant };

/** The admin key's operator: every role, no name of a person. */
const KEY_OPERATOR: ConsoleOperator = {
  id: null,
  name: CONSOLE_OPERATOR,
  email: null,
  role: 'owner',
  method: 'key',
  secondFactor: null,
};

/** The step a named operator's session owes, from the session and the operator's state now. */
export function stepOf(row: SessionRow, state: SignInState): SignInStep {
  if (row.pendingSecondFactor && state.totpEnabled) return 'second-factor';
  // Owed by the session opened with the one-time password, and by no other session of the operator.
  if (row.owesPasswordChange && state.mustChangePassword) return 'password';
  // Single sign-on leaves the second factor to the provider, which the owner configured.
  if (row.method === 'password' && state.twoFactorRequired && !state.totpEnabled) return 'enrol';
  return 'ready';
}

export type EnterpriseSignIn =
  | { status: 'ok'; secret: string }
  /** Wrong account or password: the API's invalid_grant. */
  | { status: 'refused' }
  /** Slowed or locked by the password grant's lockout. */
  | { status: 'locked' }
  /** Over the token endpoint's rate limit: retry after this many seconds. */
  | { status: 'limited'; retryAfterSeconds: number }
  /** The right password of a member who is not the enterprise's administrator. */
  | { status: 'not_admin' }
  /** The console client was disabled by the operator. */
  | { status: 'unavailable' };

/** What a session opened with the admin key carries: a hash, so the key is never stored. */
export function adminKeyFingerprint(adminKey: string): string {
  return sha256(`keyward-admin-key:${adminKey}`);
}

/**
 * The CSRF token of a session: derived from its secret (one-way), so it needs no column and
 * reveals nothing of the cookie.
 */
export function csrfOf(secret: string): string {
  return createHash('sha256').update(`keyward-console-csrf:${secret}`).digest('base64url');
}

/**
 * Console sign-in, sessions and sign-out. Enterprise administrators sign in by the password grant's
 * rules (token rate limits, lockout, the same user token), so the console opens no door the API
 * keeps shut.
 */
export class ConsoleSessionsService {
  private readonly sessions: ConsoleSessionsRepository;
  private readonly apps: AppsRepository;
  /** The admin key's fingerprint, which its sessions carry; null while the key is turned off. */
  private readonly keyFingerprint: string | null;

  constructor(
    private readonly db: Db,
    private readonly deps: {
      tokens: TokensService;
      login: LoginService;
      tokenLimits: TokenRequestLimits;
      adminKey: { value: string; enabled: boolean };
    },
    private readonly limits = CONSOLE_SESSION_LIMITS,
  ) {
    this.sessions = new ConsoleSessionsRepository(db);
    this.apps = new AppsRepository(db);
    this.keyFingerprint = deps.adminKey.enabled ? adminKeyFingerprint(deps.adminKey.value) : null;
  }

  /**
   * The admin key was checked by the caller: a new operator session, audited. It lives only while
   * the key it was opened with is the server's key and turned on.
   */
  async openOperator(request: RequestIds): Promise<string> {
    if (this.keyFingerprint === null) throw new Error('the admin key is turned off');
    const secret = randomSecret();
    const actor: AuditActor = { appId: null, operator: CONSOLE_OPERATOR, ...request };
    const keyFingerprint = this.keyFingerprint;
    await this.db.transaction().execute(async (trx) => {
      await new ConsoleSessionsRepository(trx).insert({
        idHash: sha256(secret),
        kind: 'operator',
        tokenHash: null,
        expiresAt: this.absoluteExpiry(),
        keyFingerprint,
      });
      await new AuditRepository(trx).record(actor, [
        { action: 'console.signed_in', subject: 'operator', enterprise: null, detail: { area: 'operator' } },
      ]);
    });
    return secret;
  }

  async signInEnterprise(
    userName: string,
    password: string,
    from: { ip: string } & RequestIds,
  ): Promise<EnterpriseSignIn> {
    const admission = await this.deps.tokenLimits.admit(from.ip, CONSOLE_CLIENT_KEY);
    if (admission.limited) return { status: 'limited', retryAfterSeconds: admission.retryAfterSeconds };
    const client = await this.apps.findByKey(CONSOLE_CLIENT_KEY);
    if (client?.status !== 'active') return { status: 'unavailable' };
    const outcome = await this.deps.login.verify(userName, password, { ip: from.ip, appId: client.id });
    if (outcome.status === 'refused') await this.deps.tokenLimits.failed(from.ip, CONSOLE_CLIENT_KEY);
    if (outcome.status !== 'ok') return { status: outcome.status };
    const issued = await this.deps.tokens.issue({
      app: client,
      scopes: ['auth_me'],
      memberId: outcome.memberId,
    });
    if (issued === undefined) return { status: 'unavailable' };
    const tokenHash = sha256(issued.access_token);
    const member = await this.deps.tokens.resolveUserTokenHash(tokenHash);
    if (member?.identity !== 'admin') {
      await this.deps.tokens.revokeHash(tokenHash);
      return member === undefined ? { status: 'refused' } : { status: 'not_admin' };
    }
    const secret = randomSecret();
    const tokenExpiry = Date.now() + issued.expires_in * 1000;
    const actor: AuditActor = { appId: client.id, operator: member.account, ...from };
    await this.db.transaction().execute(async (trx) => {
      await new ConsoleSessionsRepository(trx).insert({
        idHash: sha256(secret),
        kind: 'enterprise',
        tokenHash,
        expiresAt: new Date(Math.min(this.absoluteExpiry().getTime(), tokenExpiry)),
      });
      await new AuditRepository(trx).record(actor, [
        {
          action: 'console.signed_in',
          subject: member.account,
          enterprise: { id: member.enterpriseId },
          detail: { area: 'enterprise' },
        },
      ]);
    });
    return { status: 'ok', secret };
  }

  /** The live session of a cookie's secret, seen now; nothing once idle, expired or revoked. */
  async resolve(secret: string): Promise<ConsoleSession | undefined> {
    const row = await this.sessions.touch(sha256(secret), this.limits.idleSeconds, this.keyFingerprint);
    if (row === undefined) return undefined;
    const csrf = csrfOf(secret);
    if (row.kind === 'operator') {
      if (row.operatorId === null) return { kind: 'operator', csrf, operator: KEY_OPERATOR, step: 'ready' };
      // The session's standing (active, same credential generation) was checked by touch; the
      // role and the steps owed are read now, so a change takes effect on the next page.
      const state = await new OperatorCredentialsRepository(this.db).stateOf(row.operatorId);
      if (state?.status !== 'active') return undefined;
      // A sign-in waiting for a second factor that is gone meanwhile (an owner reset it) ends: it
      // must not become whole without the code it owed.
      if (row.pendingSecondFactor && !state.totpEnabled) return undefined;
      const operator = {
        id: state.id,
        name: state.name,
        email: state.email,
        role: state.role,
        method: row.method,
        secondFactor: row.secondFactor,
      };
      return { kind: 'operator', csrf, operator, step: stepOf(row, state) };
    }
    if (row.tokenHash === null) return undefined;
    const member = await this.deps.tokens.resolveUserTokenHash(row.tokenHash);
    return member?.identity === 'admin' ? { kind: 'enterprise', csrf, member } : undefined;
  }

  /** Ends the session and revokes the user token it signed in with. */
  async close(secret: string, session: ConsoleSession, request: RequestIds): Promise<void> {
    const actor: AuditActor =
      session.kind === 'operator'
        ? { appId: null, operator: session.operator.name, operatorId: session.operator.id, ...request }
        : { appId: session.member.appId, operator: session.member.account, ...request };
    await this.db.transaction().execute(async (trx) => {
      const tokenHash = await new ConsoleSessionsRepository(trx).delete(sha256(secret));
      if (typeof tokenHash === 'string') await new TokensRepository(trx).revoke(tokenHash);
      await new AuditRepository(trx).record(actor, [
        {
          action: 'console.signed_out',
          subject: session.kind === 'operator' ? 'operator' : session.member.account,
          enterprise: session.kind === 'operator' ? null : { id: session.member.enterpriseId },
          detail: { area: session.kind },
        },
      ]);
    });
  }

  async purgeStale(): Promise<void> {
    await this.sessions.purgeStale(this.limits.idleSeconds);
  }

  private absoluteExpiry(): Date {
    return new Date(Date.now() + this.limits.absoluteSeconds * 1000);
  }
}
