import type { Db } from '../../db/client.js';
import type { OperatorRole } from '../../db/schema.js';
import { NO_REQUEST, operatorActor, type AuditChange, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { OPERATOR_PASSWORD_LANE } from '../members/login.service.js';
import { newGlobalId } from '../shared/ids.js';
import { hashPassword } from '../shared/passwords.js';
import { randomSecret, sha256 } from '../shared/secrets.js';
import { CredentialGenerationRepository } from './credential-generation.repository.js';
import {
  OperatorsRepository,
  type MakingToken,
  type OperatorRow,
  type OperatorTokenRow,
} from './operators.repository.js';
import { permissionsOf } from './roles.js';

/**
 * Why an operator's request was refused, for surfaces that say it in the reader's language (the
 * console); the message stays the admin API's English sentence, naming the field.
 */
export type OperatorRefusal =
  | 'nameEmpty'
  | 'nameLong'
  | 'emailInvalid'
  | 'emailTaken'
  | 'lastOwner'
  | 'selfDisable'
  | 'roleWider'
  | 'days'
  | 'operatorDisabled'
  | 'passwordLength'
  | 'currentPassword'
  | 'codeWrong'
  | 'codeLocked'
  | 'twoFactorOn'
  | 'twoFactorRequired'
  | 'enrolmentChanged'
  | 'enrolFirst'
  | 'other';

abstract class OperatorError extends Error {
  constructor(
    message: string,
    readonly reason: OperatorRefusal = 'other',
  ) {
    super(message);
  }
}

/** An operator's mistake in a request: a wrong field, a role the caller may not give. */
export class OperatorInputError extends OperatorError {}
export class OperatorNotFoundError extends OperatorError {}
/** Refused to keep the platform governable: a taken email, the last owner. */
export class OperatorConflictError extends OperatorError {}

/** Personal API tokens start so: a leaked one is recognisable (secret scanners, logs' redaction). */
export const OPERATOR_TOKEN_PREFIX = 'kwp_';

export const TOKEN_DAYS_DEFAULT = 90;
export const TOKEN_DAYS_MAX = 366;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
/**
 * The longest name (an operator's, a token's) and email, as the admin API's schemas bound them:
 * checked here too, for the console's forms, which reach the service without a schema.
 */
export const NAME_MAX = 100;
export const EMAIL_MAX = 254;

/** A name as given, trimmed: refused when empty or past NAME_MAX. */
function nameOf(given: string): string {
  const name = given.trim();
  if (name === '') throw new OperatorInputError('name: must not be empty', 'nameEmpty');
  if (name.length > NAME_MAX)
    throw new OperatorInputError(`name: at most ${NAME_MAX} characters`, 'nameLong');
  return name;
}

/** Passwords are hashed where a tenant's work takes turns: the platform's own lane. */
const PLATFORM_TENANT = OPERATOR_PASSWORD_LANE;

export interface OperatorView {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  createdAt: number;
  lastSignInAt: number | null;
}

export interface OperatorTokenView {
  id: string;
  operatorId: string;
  name: string;
  role: OperatorRole;
  createdAt: number;
  expiresAt: number;
  revokedAt: number | null;
  lastUsedAt: number | null;
}

const view = (o: OperatorRow): OperatorView => ({
  id: o.id,
  name: o.name,
  email: o.email,
  role: o.role,
  status: o.status,
  createdAt: o.createdAt.getTime(),
  lastSignInAt: o.lastSignInAt?.getTime() ?? null,
});

const tokenView = (t: OperatorTokenRow): OperatorTokenView => ({
  id: t.id,
  operatorId: t.operatorId,
  name: t.name,
  role: t.role,
  createdAt: t.createdAt.getTime(),
  expiresAt: t.expiresAt.getTime(),
  revokedAt: t.revokedAt?.getTime() ?? null,
  lastUsedAt: t.lastUsedAt?.getTime() ?? null,
});

const operatorChange = (
  action: AuditChange['action'],
  operator: { id: string; email: string },
  detail: AuditChange['detail'] = {},
): AuditChange => ({
  action,
  subject: operator.email,
  enterprise: null,
  detail: { operatorId: operator.id, ...detail },
});

/** Whether every permission of `narrower` is one of `wider`'s. */
const within = (narrower: OperatorRole, wider: OperatorRole): boolean => {
  const held = new Set(permissionsOf(wider));
  return permissionsOf(narrower).every((p) => held.has(p));
};

/** Of roles that nest, the one within all the others; the first when none is. */
const narrowest = (roles: readonly OperatorRole[]): OperatorRole =>
  roles.find((r) => roles.every((other) => within(r, other))) ?? (roles[0] as OperatorRole);

/**
 * The credential a call that makes a token came with: its roles now (a personal token's own and
 * its operator's; a console session's operator's; the admin key's owner) and, for a personal
 * token, its id. A token is made within these (createToken).
 */
export interface TokenMaker {
  roles: readonly OperatorRole[];
  tokenId: string | null;
}

/** What a presented personal token turned out to be. */
export type TokenVerdict =
  | {
      status: 'ok';
      tokenId: string;
      operatorId: string;
      operatorName: string;
      roles: OperatorRole[];
    }
  | { status: 'unknown' | 'revoked' | 'expired' | 'disabled' };

/**
 * Named operators and their personal API tokens: `keyward operator …` and `/admin/operators`.
 * Every change is audited in its transaction, naming who made it. The platform always keeps an
 * active owner once it has had one: the last owner cannot be demoted or disabled.
 */
export class OperatorsService {
  constructor(
    private readonly db: Db,
    private readonly now: () => number = Date.now,
  ) {}

  async list(): Promise<OperatorView[]> {
    return (await new OperatorsRepository(this.db).list()).map(view);
  }

  /** Whether an active owner exists: until one does, the admin key is the only way in. */
  async hasActiveOwner(): Promise<boolean> {
    return (await new OperatorsRepository(this.db).activeOwners()) > 0;
  }

  private async existing(idOrEmail: string): Promise<OperatorRow> {
    const found = await new OperatorsRepository(this.db).find(idOrEmail);
    if (!found) throw new OperatorNotFoundError(`no operator ${idOrEmail}`);
    return found;
  }

  /** Adds an operator with a one-time password, shown once here and never again. */
  async add(
    input: { name: string; email: string; role: OperatorRole },
    request: OperatorRequest = NO_REQUEST,
  ): Promise<{ operator: OperatorView; password: string }> {
    const name = nameOf(input.name);
    const email = input.email.trim();
    if (email.length > EMAIL_MAX || !EMAIL.test(email))
      throw new OperatorInputError('email: not an email address', 'emailInvalid');
    const password = randomSecret(12);
    const passwordHash = await hashPassword(password, PLATFORM_TENANT);
    const added = await this.db.transaction().execute(async (trx) => {
      const row = await new OperatorsRepository(trx).insert({
        id: newGlobalId(),
        name,
        email,
        role: input.role,
        passwordHash,
      });
      if (!row) return undefined;
      await new AuditRepository(trx).record(operatorActor(request), [
        operatorChange('operator.added', row, { role: row.role }),
      ]);
      return row;
    });
    if (!added)
      throw new OperatorConflictError(`email: ${email} is another operator's already`, 'emailTaken');
    return { operator: view(added), password };
  }

  async setRole(
    idOrEmail: string,
    role: OperatorRole,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<OperatorView> {
    const { id } = await this.existing(idOrEmail);
    return this.db.transaction().execute(async (trx) => {
      const repo = new OperatorsRepository(trx);
      const operator = await repo.lock(id);
      if (!operator) throw new OperatorNotFoundError(`no operator ${idOrEmail}`);
      if (operator.role === role) return view(operator);
      await this.keepAnOwner(repo, operator, role !== 'owner');
      await repo.setRole(id, role);
      // A session opened under one role does not carry on under another: sign in again.
      await new CredentialGenerationRepository(trx).endSessions(id);
      await new AuditRepository(trx).record(operatorActor(request), [
        operatorChange('operator.role_set', operator, { role, previousRole: operator.role }),
      ]);
      return view({ ...operator, role });
    });
  }

  /**
   * Disabling ends every console session and token of the operator at once; enabling gives none
   * back. No operator disables their own account (it would end the session or token asking):
   * another owner does.
   */
  async setStatus(
    idOrEmail: string,
    status: 'active' | 'disabled',
    request: OperatorRequest = NO_REQUEST,
  ): Promise<OperatorView & { tokensRevoked: number }> {
    const { id } = await this.existing(idOrEmail);
    return this.db.transaction().execute(async (trx) => {
      const repo = new OperatorsRepository(trx);
      const operator = await repo.lock(id);
      if (!operator) throw new OperatorNotFoundError(`no operator ${idOrEmail}`);
      if (operator.status === status) return { ...view(operator), tokensRevoked: 0 };
      if (status === 'disabled' && request.operatorId === operator.id) {
        throw new OperatorConflictError(
          `${operator.email}: an operator cannot disable their own account; another owner can`,
          'selfDisable',
        );
      }
      if (status === 'disabled') await this.keepAnOwner(repo, operator, true);
      await repo.setStatus(id, status);
      // Enable moves the generation on as well: a session from before the disable stays ended.
      await new CredentialGenerationRepository(trx).endSessions(id);
      const tokensRevoked = status === 'disabled' ? await repo.revokeTokensOf(id) : 0;
      await new AuditRepository(trx).record(operatorActor(request), [
        operatorChange(status === 'disabled' ? 'operator.disabled' : 'operator.enabled', operator, {
          tokensRevoked,
        }),
      ]);
      return { ...view({ ...operator, status }), tokensRevoked };
    });
  }

  /**
   * A new one-time password, shown once. Every console session of the operator ends at once: the
   * password is owed by the session that signs in with the one-time one, and by no session open
   * now. The operator's tokens stay (separate credentials, each revoked on its own).
   */
  async resetPassword(
    idOrEmail: string,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<{ operator: OperatorView; password: string }> {
    const operator = await this.existing(idOrEmail);
    const password = randomSecret(12);
    const passwordHash = await hashPassword(password, PLATFORM_TENANT);
    await this.db.transaction().execute(async (trx) => {
      await new OperatorsRepository(trx).setPassword(operator.id, passwordHash);
      await new CredentialGenerationRepository(trx).endSessions(operator.id);
      await new AuditRepository(trx).record(operatorActor(request), [
        operatorChange('operator.password_reset', operator),
      ]);
    });
    return { operator: view(operator), password };
  }

  /**
   * Ends every console session of the operator at once, on every instance (a lost laptop, a
   * shared screen). Tokens are separate credentials and stay: revoke them one by one.
   */
  async signOutEverywhere(idOrEmail: string, request: OperatorRequest = NO_REQUEST): Promise<OperatorView> {
    const operator = await this.existing(idOrEmail);
    await this.db.transaction().execute(async (trx) => {
      await new CredentialGenerationRepository(trx).endSessions(operator.id);
      await new AuditRepository(trx).record(operatorActor(request), [
        operatorChange('operator.signed_out_everywhere', operator),
      ]);
    });
    return view(operator);
  }

  /** The last active owner stays one: without an owner nobody could manage operators but the key. */
  private async keepAnOwner(
    repo: OperatorsRepository,
    operator: OperatorRow,
    losesOwner: boolean,
  ): Promise<void> {
    if (!losesOwner || operator.role !== 'owner' || operator.status !== 'active') return;
    if ((await repo.activeOwnersBesides(operator.id)) === 0) {
      throw new OperatorConflictError(
        `${operator.email} is the last active owner; make another owner first`,
        'lastOwner',
      );
    }
  }

  /**
   * A personal API token for `operator`, shown once here and stored only as its hash. It is never
   * wider than what makes it (docs/operators.md, "Credentials"): its role lies within the
   * operator's role and every role of the calling credential (`by`); made by a personal token, it
   * also ends no later than that token and is revoked with it. Made in person (a console session)
   * or with the admin key, it lives up to TOKEN_DAYS_MAX days.
   */
  async createToken(
    idOrEmail: string,
    input: { name: string; role?: OperatorRole; days?: number },
    by: TokenMaker,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<{ token: string; view: OperatorTokenView }> {
    const operator = await this.existing(idOrEmail);
    if (operator.status !== 'active')
      throw new OperatorConflictError(`${operator.email} is disabled`, 'operatorDisabled');
    const name = nameOf(input.name);
    const role = input.role ?? narrowest([operator.role, ...by.roles]);
    const bounds = [operator.role, ...by.roles];
    const wider = bounds.find((bound) => !within(role, bound));
    if (wider !== undefined) {
      throw new OperatorInputError(
        wider === operator.role
          ? `role: ${role} is wider than ${operator.email}'s role ${operator.role}`
          : `role: ${role} is wider than the calling credential's role ${wider}`,
        'roleWider',
      );
    }
    const days = input.days ?? TOKEN_DAYS_DEFAULT;
    if (!Number.isInteger(days) || days < 1 || days > TOKEN_DAYS_MAX) {
      throw new OperatorInputError(`days: a whole number from 1 to ${TOKEN_DAYS_MAX}`, 'days');
    }
    const token = `${OPERATOR_TOKEN_PREFIX}${randomSecret(32)}`;
    const created = await this.db.transaction().execute(async (trx) => {
      const repo = new OperatorsRepository(trx);
      let expiresAt = new Date(this.now() + days * 86_400_000);
      let lineage: string[] = [];
      if (by.tokenId !== null) {
        const maker = await this.liveMaker(repo, by.tokenId);
        const madeWider = [maker.role, maker.operatorRole].find((bound) => !within(role, bound));
        if (madeWider !== undefined) {
          throw new OperatorInputError(
            `role: ${role} is wider than the calling credential's role ${madeWider}`,
            'roleWider',
          );
        }
        if (expiresAt > maker.expiresAt) {
          // Asked for outright, a longer life is refused; the default is cut to the maker's.
          if (input.days !== undefined) {
            const left = Math.max(1, Math.floor((maker.expiresAt.getTime() - this.now()) / 86_400_000));
            throw new OperatorInputError(
              `days: at most ${left}: a token made by a token ends no later than it (sign in to make a longer one)`,
              'days',
            );
          }
          expiresAt = maker.expiresAt;
        }
        lineage = [...maker.lineage, maker.id];
      }
      const row = await repo.insertToken({
        id: newGlobalId(),
        operatorId: operator.id,
        name,
        role,
        tokenHash: sha256(token),
        expiresAt,
        lineage,
      });
      await new AuditRepository(trx).record(operatorActor(request), [
        {
          action: 'operator_token.created',
          subject: row.id,
          enterprise: null,
          detail: {
            operatorId: operator.id,
            name,
            role,
            expiresAt: row.expiresAt.toISOString(),
            ...(by.tokenId === null ? {} : { madeByToken: by.tokenId }),
          },
        },
      ]);
      return row;
    });
    return { token, view: tokenView(created) };
  }

  /** The calling token, locked while it makes another: it must still be live itself. */
  private async liveMaker(repo: OperatorsRepository, tokenId: string): Promise<MakingToken> {
    const maker = await repo.lockMakingToken(tokenId);
    if (
      maker === undefined ||
      maker.revokedAt !== null ||
      maker.expiresAt.getTime() <= this.now() ||
      maker.operatorStatus !== 'active'
    ) {
      throw new OperatorConflictError('the calling token is no longer live', 'operatorDisabled');
    }
    return maker;
  }

  /**
   * The operator a personal token speaks for, and the roles it holds: its own and its operator's
   * now. Its use is recorded (at most once a minute).
   */
  async authenticate(token: string): Promise<TokenVerdict> {
    if (!token.startsWith(OPERATOR_TOKEN_PREFIX)) return { status: 'unknown' };
    const repo = new OperatorsRepository(this.db);
    const holder = await repo.holderOf(sha256(token));
    if (!holder) return { status: 'unknown' };
    if (holder.revokedAt !== null) return { status: 'revoked' };
    if (holder.expiresAt.getTime() <= this.now()) return { status: 'expired' };
    if (holder.operatorStatus !== 'active') return { status: 'disabled' };
    // A token made by a token ends with it: one revoked or expired up its lineage ends this one.
    if (!holder.lineageLive) return { status: 'revoked' };
    await repo.touchToken(holder.tokenId);
    return {
      status: 'ok',
      tokenId: holder.tokenId,
      operatorId: holder.operatorId,
      operatorName: holder.operatorName,
      // Each role once: a token of its operator's own role is held by that one role.
      roles: [...new Set([holder.tokenRole, holder.operatorRole])],
    };
  }

  async tokens(idOrEmail: string): Promise<OperatorTokenView[]> {
    const operator = await this.existing(idOrEmail);
    return (await new OperatorsRepository(this.db).tokensOf(operator.id)).map(tokenView);
  }

  /**
   * Revokes a token. `owner`, when given, must hold it: an operator revoking through his own
   * rights reaches only his own tokens, and another's answers as one that does not exist.
   */
  async revokeToken(
    tokenId: string,
    owner: string | null,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<OperatorTokenView> {
    return this.db.transaction().execute(async (trx) => {
      const repo = new OperatorsRepository(trx);
      const token = await repo.findToken(tokenId);
      if (!token || (owner !== null && token.operatorId !== owner)) {
        throw new OperatorNotFoundError(`no token ${tokenId}`);
      }
      if (await repo.revokeToken(tokenId)) {
        await new AuditRepository(trx).record(operatorActor(request), [
          {
            action: 'operator_token.revoked',
            subject: token.id,
            enterprise: null,
            detail: { operatorId: token.operatorId },
          },
        ]);
      }
      const now = await repo.findToken(tokenId);
      return tokenView(now ?? token);
    });
  }
}
