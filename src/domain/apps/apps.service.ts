import type { Db } from '../../db/client.js';
import { NO_REQUEST, operatorActor, type AuditChange, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { randomSecret, safeEqual, sha256 } from '../shared/secrets.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import { AppsRepository, type AppRecord, type AppStatus } from './apps.repository.js';
import { OFFLINE_LEASE_MAX_DAYS } from './offline-lease.js';

/**
 * auth_order: the order service; auth_me: the member center; auth_runtime: the license runtime;
 * auth_webhooks: the app's own webhook endpoints.
 */
export const SCOPES = ['auth_order', 'auth_me', 'auth_runtime', 'auth_webhooks'] as const;
export type Scope = (typeof SCOPES)[number];

const CHANNEL_CODE = /^[A-Za-z0-9_.-]{1,64}$/;

export class AppInputError extends Error {}
export class AppNotFoundError extends Error {}

/** What an operator sees of an application; the secret appears only on create and rotate. */
export interface AppView {
  appKey: string;
  name: string;
  scopes: string[];
  channels: string[];
  status: AppStatus;
  /** The longest offline lease the license runtime may hand out for the app, in days; 0: none. */
  offlineLeaseMaxDays: number;
  createdAt: number;
}

export interface AppWithSecret {
  appKey: string;
  appSecret: string;
  scopes: string[];
  channels: string[];
  status: AppStatus;
}

/** A rotated secret, and whether the tokens issued before were revoked with it. */
export interface RotatedSecret extends AppWithSecret {
  tokensRevoked: boolean;
}

function view(app: AppRecord): AppView {
  return {
    appKey: app.appKey,
    name: app.name,
    scopes: app.scopes,
    channels: app.channels,
    status: app.status,
    offlineLeaseMaxDays: app.offlineLeaseMaxDays,
    createdAt: app.createdAt.getTime(),
  };
}

function withSecret(app: AppRecord, appSecret: string): AppWithSecret {
  return { appKey: app.appKey, appSecret, scopes: app.scopes, channels: app.channels, status: app.status };
}

/** A row about an app: its key (its public id) is the subject, its id in the detail. */
function appChange(
  action: AuditChange['action'],
  app: AppRecord,
  detail: AuditChange['detail'] = {},
): AuditChange {
  return { action, subject: app.appKey, enterprise: null, detail: { appId: app.id, ...detail } };
}

/**
 * The operator's applications (`keyward app …`). Each change is audited in its own transaction;
 * `request` names the admin-API call that asked for it.
 */
export class AppsService {
  private readonly apps: AppsRepository;

  constructor(private readonly db: Db) {
    this.apps = new AppsRepository(db);
  }

  async create(
    input: {
      name: string;
      scopes: string[];
      channels: string[];
      pending: boolean;
    },
    request: OperatorRequest = NO_REQUEST,
  ): Promise<AppWithSecret> {
    const name = input.name.trim();
    if (name === '' || name.length > 100) throw new AppInputError('name must be 1–100 characters');
    if (input.scopes.length === 0) throw new AppInputError('scopes must not be empty');
    for (const scope of input.scopes) {
      if (!(SCOPES as readonly string[]).includes(scope)) {
        throw new AppInputError(`unknown scope "${scope}"; allowed: ${SCOPES.join(', ')}`);
      }
    }
    for (const channel of input.channels) {
      if (!CHANNEL_CODE.test(channel)) {
        throw new AppInputError(`channel code "${channel}" must be 1–64 of A-Za-z0-9_.-`);
      }
    }
    const appSecret = randomSecret();
    const app = await this.db.transaction().execute(async (trx) => {
      const inserted = await new AppsRepository(trx).insert({
        id: newGlobalId(),
        appKey: `kw_${randomSecret(12)}`,
        secretHash: sha256(appSecret),
        name,
        scopes: [...new Set(input.scopes)],
        channels: [...new Set(input.channels)],
        status: input.pending ? 'pending' : 'active',
      });
      const { scopes, channels, status } = inserted;
      await new AuditRepository(trx).record(operatorActor(request), [
        appChange('app.created', inserted, { name, scopes, channels, status }),
      ]);
      return inserted;
    });
    return withSecret(app, appSecret);
  }

  async list(): Promise<AppView[]> {
    return (await this.apps.list()).map(view);
  }

  /** A page of apps for the console, newest first; `search` matches the name or the key's start. */
  async page(query: {
    search?: string;
    page: number;
    pageSize: number;
  }): Promise<{ total: number; apps: AppView[] }> {
    const { total, apps } = await this.apps.page({
      ...(query.search === undefined ? {} : { search: query.search }),
      offset: (query.page - 1) * query.pageSize,
      limit: query.pageSize,
    });
    return { total, apps: apps.map(view) };
  }

  /** Approving an active app changes nothing and is not audited. */
  async approve(appKey: string, request: OperatorRequest = NO_REQUEST): Promise<AppView> {
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const current = await this.require(apps, appKey);
      if (current.status === 'disabled') {
        throw new AppInputError('a disabled application cannot be approved; create a new one');
      }
      if (current.status === 'active') return view(current);
      const app = (await apps.update(appKey, { status: 'active' })) ?? current;
      await new AuditRepository(trx).record(operatorActor(request), [appChange('app.approved', app)]);
      return view(app);
    });
  }

  /**
   * Disabling revokes every token of the app in the same transaction: refused everywhere at once.
   * Disabling it again changes nothing and is not audited.
   */
  async disable(appKey: string, request: OperatorRequest = NO_REQUEST): Promise<AppView> {
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const before = await this.require(apps, appKey);
      const app = (await apps.update(appKey, { status: 'disabled' })) ?? before;
      await new TokensRepository(trx).revokeForApp(app.id);
      if (before.status !== 'disabled') {
        await new AuditRepository(trx).record(operatorActor(request), [
          appChange('app.disabled', app, { previousStatus: before.status, tokensRevoked: true }),
        ]);
      }
      return view(app);
    });
  }

  /**
   * A new secret; with `revokeTokens`, every token of the app (app and user tokens) is revoked in
   * the same transaction, so the old ones are refused on every instance from their next call.
   * Without it they live until they expire, which lets clients switch secrets without a gap.
   */
  async rotateSecret(
    appKey: string,
    options: { revokeTokens: boolean },
    request: OperatorRequest = NO_REQUEST,
  ): Promise<RotatedSecret> {
    const appSecret = randomSecret();
    return this.db.transaction().execute(async (trx) => {
      const app = await new AppsRepository(trx).update(appKey, { secretHash: sha256(appSecret) });
      if (!app) throw new AppNotFoundError(`no application ${appKey}`);
      if (options.revokeTokens) await new TokensRepository(trx).revokeForApp(app.id);
      await new AuditRepository(trx).record(operatorActor(request), [
        appChange('app.secret_rotated', app, { tokensRevoked: options.revokeTokens }),
      ]);
      return { ...withSecret(app, appSecret), tokensRevoked: options.revokeTokens };
    });
  }

  /**
   * How many days an offline lease of the app may last, 0 to OFFLINE_LEASE_MAX_DAYS (0: offline
   * leases are not allowed). Setting the value it has changes nothing and is not audited.
   */
  async setOfflineLeaseMaxDays(
    appKey: string,
    days: number,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<AppView> {
    if (!Number.isInteger(days) || days < 0 || days > OFFLINE_LEASE_MAX_DAYS) {
      throw new AppInputError(`days must be a whole number from 0 to ${OFFLINE_LEASE_MAX_DAYS}`);
    }
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const before = await this.require(apps, appKey);
      if (before.offlineLeaseMaxDays === days) return view(before);
      const app = (await apps.update(appKey, { offlineLeaseMaxDays: days })) ?? before;
      await new AuditRepository(trx).record(operatorActor(request), [
        appChange('app.offline_lease_days_set', app, { days, previousDays: before.offlineLeaseMaxDays }),
      ]);
      return view(app);
    });
  }

  /**
   * The license runtime's bound on the leases it hands out for an app, by the app's id (what its
   * token carries). An app that is not found gets none: the answer never allows more than was set.
   */
  async offlineLeaseMaxDays(appId: string): Promise<number> {
    return (await this.apps.offlineLeaseMaxDays(appId)) ?? 0;
  }

  /** The client authentication of the token endpoint: an active app whose secret matches. */
  async authenticate(appKey: string, appSecret: string): Promise<AppRecord | undefined> {
    const app = await this.apps.findByKey(appKey);
    if (!app || app.status !== 'active') return undefined;
    return safeEqual(sha256(appSecret), app.secretHash) ? app : undefined;
  }

  /** The app, row-locked in the caller's transaction. */
  private async require(apps: AppsRepository, appKey: string): Promise<AppRecord> {
    const app = await apps.findByKey(appKey, { lock: true });
    if (!app) throw new AppNotFoundError(`no application ${appKey}`);
    return app;
  }
}
