import { CredentialGenerationRepository } from '../operators/credential-generation.repository.js';
import * as oidc from 'openid-client';
import type { Db } from '../../db/client.js';
import type { OperatorRole } from '../../db/schema.js';
import type { SsoConfig } from '../../sso-config.js';
import { operatorActor, type AuditChange, type RequestIds } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import type { RequestGate } from '../gate/gate.js';
import { loginAddress } from '../members/login-source.js';
import type { OperatorSignInService } from '../console/operator-sign-in.service.js';
import { OperatorsRepository } from '../operators/operators.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { randomSecret, sha256 } from '../shared/secrets.js';
import { OidcProviderClient, ProviderError, type ProviderUser } from './oidc-provider-client.js';
import { groupsOf, roleFor } from './role-mapping.js';
import { SsoOperatorsRepository, type SsoOperator } from './sso-operators.repository.js';
import { SsoRequestsRepository } from './sso-requests.repository.js';

/** How long a sign-in may stay at the provider (a password, a second factor there). */
export const SSO_REQUEST_SECONDS = 10 * 60;

/**
 * Bounds on sign-ins in flight. Anyone may start one, and each is a row kept SSO_REQUEST_SECONDS:
 * `perAddressPerMinute` from one address (an IPv6 /64 is one), counted in the gate's store so every
 * instance shares the count, keeps one caller to a few hundred rows; `inFlight` bounds the rows of
 * all callers together, so storage stays bounded however many addresses a flood comes from.
 */
export interface SsoStartLimits {
  perAddressPerMinute: number;
  inFlight: number;
}

export const SSO_START_LIMITS: SsoStartLimits = { perAddressPerMinute: 30, inFlight: 10_000 };

/**
 * Why a sign-in the provider vouched for (or claimed to) is refused:
 * `state`, the return matches no sign-in this browser started (unknown, used, expired, another's);
 * `no_role`, none of the user's groups is mapped to a role; `no_email`, the provider sent none;
 * `email_unverified`, an operator has that email but the provider does not vouch for it;
 * `subject_conflict`, that operator is tied to another user of the provider; `disabled`;
 * `last_owner`, the mapping would demote the last active owner; `taken`, a first sign-in raced
 * another for the same email or user.
 */
export type SsoRefusal =
  | 'state'
  | 'no_role'
  | 'no_email'
  | 'email_unverified'
  | 'subject_conflict'
  | 'disabled'
  | 'last_owner'
  | 'taken';

/**
 * `limited`: too many starts, from this address (`address`) or in flight from everyone
 * (`everyone`); nothing was stored.
 */
export type SsoStart =
  | { status: 'ok'; url: string; browserSecret: string }
  | { status: 'provider'; error: ProviderError }
  | { status: 'limited'; by: 'address' | 'everyone'; retryAfterSeconds: number };

export type SsoFinish =
  | { status: 'ok'; secret: string; operator: { id: string; name: string; role: OperatorRole } }
  | { status: 'refused'; reason: SsoRefusal }
  | { status: 'provider'; error: ProviderError };

type Resolved = { operator: SsoOperator } | { refused: SsoRefusal; operator?: SsoOperator };

/**
 * Operators' single sign-on with OpenID Connect (docs/operators.md): the redirect to the provider,
 * and its return, which finds or makes the operator the provider vouches for, sets their role from
 * their groups and opens a console session. Every change and every refusal of a known user is
 * audited; a return that matches no sign-in is not (anyone could send those, and flood the log).
 */
export class SsoService {
  private readonly provider: OidcProviderClient;

  constructor(
    private readonly db: Db,
    private readonly settings: SsoConfig,
    private readonly signIn: Pick<OperatorSignInService, 'openSso'>,
    private readonly gate: Pick<RequestGate, 'countRequests'>,
    private readonly limits: SsoStartLimits = SSO_START_LIMITS,
  ) {
    this.provider = new OidcProviderClient(settings);
  }

  /**
   * Where to send the browser, and the secret of the cookie that binds the sign-in to it. Nothing is
   * stored when the provider cannot be reached or a limit is reached (SsoStartLimits). Counted
   * before the provider is asked: a flood costs it no discovery either.
   */
  async start(ip: string): Promise<SsoStart> {
    const [started = 0] = await this.gate.countRequests([`sso-start:${loginAddress(ip)}`]);
    if (started > this.limits.perAddressPerMinute) {
      return { status: 'limited', by: 'address', retryAfterSeconds: untilNextMinute() };
    }
    const checks = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
    };
    let url: URL;
    try {
      url = await this.provider.authorizationUrl(checks);
    } catch (error) {
      if (error instanceof ProviderError) return { status: 'provider', error };
      throw error;
    }
    const browserSecret = randomSecret();
    const requests = new SsoRequestsRepository(this.db);
    await requests.deleteExpired();
    const kept = await requests.insertWithin(this.limits.inFlight, {
      stateHash: sha256(checks.state),
      browserHash: sha256(browserSecret),
      nonce: checks.nonce,
      codeVerifier: checks.codeVerifier,
      expiresAt: new Date(Date.now() + SSO_REQUEST_SECONDS * 1000),
    });
    // Room comes back as sign-ins finish or expire: a minute is a fair time to look again.
    if (!kept) return { status: 'limited', by: 'everyone', retryAfterSeconds: 60 };
    return { status: 'ok', url: url.href, browserSecret };
  }

  /** The browser's return: `query` is the callback's query string as it came. */
  async finish(query: string, browserSecret: string | undefined, from: RequestIds): Promise<SsoFinish> {
    const state = new URLSearchParams(query).get('state');
    if (state === null || state === '' || browserSecret === undefined)
      return { status: 'refused', reason: 'state' };
    const taken = await new SsoRequestsRepository(this.db).take(sha256(state), sha256(browserSecret));
    if (taken === undefined) return { status: 'refused', reason: 'state' };
    let user: ProviderUser;
    try {
      user = await this.provider.userOf(query, { state, ...taken });
    } catch (error) {
      if (error instanceof ProviderError) return { status: 'provider', error };
      throw error;
    }
    const role = roleFor(groupsOf(user.roleClaim), this.settings.roleMap);
    const resolved: Resolved =
      role === undefined ? { refused: 'no_role' } : await this.resolve(user, role, from);
    if ('refused' in resolved) {
      await this.recordRefusal(user, resolved.refused, resolved.operator, from);
      return { status: 'refused', reason: resolved.refused };
    }
    const { operator } = resolved;
    const secret = await this.signIn.openSso(operator.id, from);
    // Disabled between the transaction and now: as refused as before it.
    if (secret === undefined) return { status: 'refused', reason: 'disabled' };
    return { status: 'ok', secret, operator: { id: operator.id, name: operator.name, role: operator.role } };
  }

  /**
   * The operator the user is, in one transaction: by the provider's subject, else by a verified
   * email (then tied to the subject), else made now. The role follows the groups at every sign-in.
   */
  private resolve(user: ProviderUser, role: OperatorRole, from: RequestIds): Promise<Resolved> {
    return this.db.transaction().execute(async (trx): Promise<Resolved> => {
      const operators = new SsoOperatorsRepository(trx);
      const audit = new AuditRepository(trx);
      let found = await operators.lockBySubject(user.subject);
      let link = false;
      if (found === undefined && user.email !== undefined) {
        const byEmail = await operators.lockByEmail(user.email);
        if (byEmail !== undefined) {
          // An unverified email would let whoever typed it at the provider take over the operator.
          if (!user.emailVerified) return { refused: 'email_unverified', operator: byEmail };
          if (byEmail.ssoSubject !== null) return { refused: 'subject_conflict', operator: byEmail };
          found = byEmail;
          link = true;
        }
      }
      if (found === undefined) return this.provision(trx, user, role, from);
      if (found.status !== 'active') return { refused: 'disabled', operator: found };
      const repo = new OperatorsRepository(trx);
      if (found.role !== role && found.role === 'owner' && (await repo.activeOwnersBesides(found.id)) === 0) {
        return { refused: 'last_owner', operator: found };
      }
      const actor = actorOf(found, from);
      if (link) {
        await operators.linkSubject(found.id, user.subject);
        await audit.record(actor, [change('operator.sso_linked', found, { subject: user.subject })]);
      }
      if (found.role !== role) {
        await repo.setRole(found.id, role);
        // As for any role change: sessions opened under the old role end (the new one opens after).
        await new CredentialGenerationRepository(trx).endSessions(found.id);
        await audit.record(actor, [
          change('operator.role_set', found, { role, previousRole: found.role, via: 'sso' }),
        ]);
      }
      return { operator: { ...found, role, ssoSubject: user.subject } };
    });
  }

  private async provision(
    trx: Db,
    user: ProviderUser,
    role: OperatorRole,
    from: RequestIds,
  ): Promise<Resolved> {
    if (user.email === undefined) return { refused: 'no_email' };
    const made = await new SsoOperatorsRepository(trx).insertProvisioned({
      id: newGlobalId(),
      name: user.name ?? user.email,
      email: user.email,
      role,
      subject: user.subject,
    });
    if (made === undefined) return { refused: 'taken' };
    await new AuditRepository(trx).record(actorOf(made, from), [
      change('operator.sso_provisioned', made, { role, subject: user.subject }),
    ]);
    return { operator: made };
  }

  private async recordRefusal(
    user: ProviderUser,
    reason: SsoRefusal,
    operator: SsoOperator | undefined,
    from: RequestIds,
  ): Promise<void> {
    const who = operator?.email ?? user.email ?? user.subject;
    await new AuditRepository(this.db).record(
      // Not in the operator's name: the provider's user is not (yet) shown to be them.
      operatorActor({ ...from, operator: who }),
      [
        {
          action: 'operator.sign_in_failed',
          subject: who,
          enterprise: null,
          detail: {
            stage: 'sso',
            reason,
            subject: user.subject,
            ...(operator ? { operatorId: operator.id } : {}),
          },
        },
      ],
    );
  }
}

/** Seconds until the gate's next one-minute window, when an address's count starts again. */
const untilNextMinute = () => 60 - Math.floor((Date.now() % 60_000) / 1000);

const actorOf = (operator: SsoOperator, from: RequestIds) =>
  operatorActor({ ...from, operator: operator.name, operatorId: operator.id });

const change = (
  action: AuditChange['action'],
  operator: { id: string; email: string },
  detail: AuditChange['detail'],
): AuditChange => ({
  action,
  subject: operator.email,
  enterprise: null,
  detail: { operatorId: operator.id, ...detail },
});
