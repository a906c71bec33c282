import type { Db } from '../../db/client.js';
import { NO_REQUEST, operatorActor, type AuditChange, type OperatorRequest } from '../audit/audit-actions.js';
import { AuditRepository } from '../audit/audit.repository.js';
import { CONSOLE_CLIENT_KEY } from '../console/console-client.js';
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
/** A change to the console's own client asked for without `force`. */
export class AppProtectedError extends Error {}

/** What an operator may ask with `force`: a change to the console's own client. */
export interface ForceOption {
  force?: boolean;
}

/** The changes to keyward-console that need `force`, and what each would do to the console. */
export type ProtectedChange = 'disable' | 'rotate-secret' | 'settings';

const PROTECTED_CONSEQUENCE: Record<ProtectedChange, string> = {
  disable: 'disabling it ends console sign-in for every enterprise',
  'rotate-secret':
    'rotating its secret gives it one that signs in members of every enterprise outside the console, ' +
    'and with revokeTokens ends console sign-in for every enterprise at once',
  settings:
    'it runs no licensed software and serves every enterprise, so a change to it can end console ' +
    'sign-in for every enterprise',
};

/** The refusal of a change to keyward-console without force: what it does, and how to insist. */
export function protectedMessage(change: ProtectedChange): string {
  return (
    `${CONSOLE_CLIENT_KEY} is the console's own sign-in client, which every enterprise administrator ` +
    `signs in through: ${PROTECTED_CONSEQUENCE[change]}. To do it anyway, repeat with force ` +
    '(--force on the CLI, "force": true in the admin API\'s body)'
  );
}

/** The settings `keyward app set` changes; those left out stay as they are. */
export interface AppSettings {
  /** A checked-in offline lease frees its seat at once, trusting the software deleted it. */
  offlineEarlyReturn?: boolean;
  /** Member logins and user tokens only for enterprises with a customer in the app's channels. */
  restrictToChannels?: boolean;
  /** Its calls a minute, all instances together; null: back to the server's RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute?: number | null;
}

/** The highest per-app limit one may set: a billion calls a minute is no limit at all. */
export const MAX_APP_RATE_LIMIT = 1_000_000_000;

/** An app after `setSettings`, and which of the settings given it changed (the others were so). */
export interface AppSettingsChange extends AppView {
  changed: (keyof AppSettings)[];
}

/** What an operator sees of an application; the secret appears only on create and rotate. */
export interface AppView {
  appKey: string;
  name: string;
  scopes: string[];
  channels: string[];
  status: AppStatus;
  /** The longest offline lease the license runtime may hand out for the app, in days; 0: none. */
  offlineLeaseMaxDays: number;
  /** A checked-in offline lease frees its seat at once (the vendor's software deletes it). */
  offlineEarlyReturn: boolean;
  /** Member logins only for the enterprises of its channels; off, it serves every enterprise. */
  restrictToChannels: boolean;
  /** Its own calls a minute (all instances together); null: the server's RATE_LIMIT_PER_MINUTE. */
  rateLimitPerMinute: number | null;
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
    offlineEarlyReturn: app.offlineEarlyReturn,
    restrictToChannels: app.restrictToChannels,
    rateLimitPerMinute: app.rateLimitPerMinute,
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
 * Refuses a change to the console's own client unless forced; a forced one says so in its audit
 * detail (spread into it).
 */
function guardConsoleClient(
  app: AppRecord,
  change: ProtectedChange,
  options: ForceOption,
): { forced?: true } {
  if (app.appKey !== CONSOLE_CLIENT_KEY) return {};
  if (options.force !== true) throw new AppProtectedError(protectedMessage(change));
  return { forced: true };
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
    if (name === '' || name.length > 100) throw new AppInputError('name: must be 1–100 characters');
    if (input.scopes.length === 0) throw new AppInputError('scopes: must not be empty');
    for (const scope of input.scopes) {
      if (!(SCOPES as readonly string[]).includes(scope)) {
        throw new AppInputError(`scopes: unknown scope "${scope}"; allowed: ${SCOPES.join(', ')}`);
      }
    }
    for (const channel of input.channels) {
      if (!CHANNEL_CODE.test(channel)) {
        throw new AppInputError(`channels: channel code "${channel}" must be 1–64 of A-Za-z0-9_.-`);
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

  /** Each app's key and name by id: what a person reads where a log row keeps only the id. */
  async namesOf(ids: readonly string[]): Promise<Map<string, { appKey: string; name: string }>> {
    return this.apps.namesOf(ids);
  }

  /**
   * A page of the channel apps for the console, newest first; `search` matches the name or the
   * key's start. The console's own client is not among them (see consoleClient).
   */
  async page(query: {
    search?: string;
    page: number;
    pageSize: number;
  }): Promise<{ total: number; apps: AppView[] }> {
    const { total, apps } = await this.apps.page({
      ...(query.search === undefined ? {} : { search: query.search }),
      excludeKey: CONSOLE_CLIENT_KEY,
      offset: (query.page - 1) * query.pageSize,
      limit: query.pageSize,
    });
    return { total, apps: apps.map(view) };
  }

  /** The console's own sign-in client (migration 0120), shown apart from the channel apps. */
  async consoleClient(): Promise<AppView | undefined> {
    const app = await this.apps.findByKey(CONSOLE_CLIENT_KEY);
    return app && view(app);
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
   * Disabling it again changes nothing and is not audited. The console's own client only with
   * `force`.
   */
  async disable(
    appKey: string,
    request: OperatorRequest = NO_REQUEST,
    options: ForceOption = {},
  ): Promise<AppView> {
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const before = await this.require(apps, appKey);
      const forced = guardConsoleClient(before, 'disable', options);
      const app = (await apps.update(appKey, { status: 'disabled' })) ?? before;
      await new TokensRepository(trx).revokeForApp(app.id);
      if (before.status !== 'disabled') {
        await new AuditRepository(trx).record(operatorActor(request), [
          appChange('app.disabled', app, { previousStatus: before.status, tokensRevoked: true, ...forced }),
        ]);
      }
      return view(app);
    });
  }

  /**
   * A new secret; with `revokeTokens`, every token of the app (app and user tokens) is revoked in
   * the same transaction, so the old ones are refused on every instance from their next call.
   * Without it they live until they expire, which lets clients switch secrets without a gap. The
   * console's own client only with `force`.
   */
  async rotateSecret(
    appKey: string,
    options: { revokeTokens: boolean } & ForceOption,
    request: OperatorRequest = NO_REQUEST,
  ): Promise<RotatedSecret> {
    const appSecret = randomSecret();
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const forced = guardConsoleClient(await this.require(apps, appKey), 'rotate-secret', options);
      const app = await apps.update(appKey, { secretHash: sha256(appSecret) });
      if (!app) throw new AppNotFoundError(`no application ${appKey}`);
      if (options.revokeTokens) await new TokensRepository(trx).revokeForApp(app.id);
      await new AuditRepository(trx).record(operatorActor(request), [
        appChange('app.secret_rotated', app, { tokensRevoked: options.revokeTokens, ...forced }),
      ]);
      return { ...withSecret(app, appSecret), tokensRevoked: options.revokeTokens };
    });
  }

  /**
   * How many days an offline lease of the app may last, 0 to OFFLINE_LEASE_MAX_DAYS (0: offline
   * leases are not allowed). Setting the value it has changes nothing and is not audited. The
   * console's own client only with `force`.
   */
  async setOfflineLeaseMaxDays(
    appKey: string,
    days: number,
    request: OperatorRequest = NO_REQUEST,
    options: ForceOption = {},
  ): Promise<AppView> {
    if (!Number.isInteger(days) || days < 0 || days > OFFLINE_LEASE_MAX_DAYS) {
      throw new AppInputError(`days must be a whole number from 0 to ${OFFLINE_LEASE_MAX_DAYS}`);
    }
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const before = await this.require(apps, appKey);
      const forced = guardConsoleClient(before, 'settings', options);
      if (before.offlineLeaseMaxDays === days) return view(before);
      const app = (await apps.update(appKey, { offlineLeaseMaxDays: days })) ?? before;
      await new AuditRepository(trx).record(operatorActor(request), [
        appChange('app.offline_lease_days_set', app, {
          days,
          previousDays: before.offlineLeaseMaxDays,
          ...forced,
        }),
      ]);
      return view(app);
    });
  }

  /**
   * Changes the settings given (`keyward app set`), each change audited on its own row; a setting
   * given the value it has changes nothing and is not audited. An app without channels cannot be
   * restricted to them: it would refuse every login. The console's own client only with `force`.
   */
  async setSettings(
    appKey: string,
    settings: AppSettings,
    request: OperatorRequest = NO_REQUEST,
    options: ForceOption = {},
  ): Promise<AppSettingsChange> {
    if (
      settings.offlineEarlyReturn === undefined &&
      settings.restrictToChannels === undefined &&
      settings.rateLimitPerMinute === undefined
    ) {
      throw new AppInputError(
        'body: give at least one setting: offlineEarlyReturn, restrictToChannels, rateLimitPerMinute',
      );
    }
    const limit = settings.rateLimitPerMinute;
    if (
      limit !== undefined &&
      limit !== null &&
      !(Number.isInteger(limit) && limit >= 1 && limit <= MAX_APP_RATE_LIMIT)
    ) {
      throw new AppInputError(
        `rateLimitPerMinute: a whole number from 1 to ${MAX_APP_RATE_LIMIT}, or null for the default`,
      );
    }
    return this.db.transaction().execute(async (trx) => {
      const apps = new AppsRepository(trx);
      const before = await this.require(apps, appKey);
      const forced = guardConsoleClient(before, 'settings', options);
      if (settings.restrictToChannels === true && before.channels.length === 0) {
        throw new AppInputError(
          'restrictToChannels: the application has no channels, so it would refuse every member login',
        );
      }
      const changes: AuditChange[] = [];
      if (
        settings.offlineEarlyReturn !== undefined &&
        settings.offlineEarlyReturn !== before.offlineEarlyReturn
      ) {
        changes.push(
          appChange('app.offline_early_return_set', before, {
            offlineEarlyReturn: settings.offlineEarlyReturn,
            previous: before.offlineEarlyReturn,
            ...forced,
          }),
        );
      }
      if (
        settings.restrictToChannels !== undefined &&
        settings.restrictToChannels !== before.restrictToChannels
      ) {
        changes.push(
          appChange('app.channel_restriction_set', before, {
            restrictToChannels: settings.restrictToChannels,
            previous: before.restrictToChannels,
            ...forced,
          }),
        );
      }
      if (limit !== undefined && limit !== before.rateLimitPerMinute) {
        changes.push(
          appChange('app.rate_limit_set', before, {
            rateLimitPerMinute: limit,
            previous: before.rateLimitPerMinute,
            ...forced,
          }),
        );
      }
      const changed = (['offlineEarlyReturn', 'restrictToChannels', 'rateLimitPerMinute'] as const).filter(
        (name) => settings[name] !== undefined && settings[name] !== before[name],
      );
      if (changes.length === 0) return { ...view(before), changed };
      const app = (await apps.update(appKey, settings)) ?? before;
      await new AuditRepository(trx).record(operatorActor(request), changes);
      return { ...view(app), changed };
    });
  }

  /**
   * The license runtime's bound on the leases it hands out for an app, by the app's id (what its
   * token carries). An app that is not found gets none: the answer never allows more than was set.
   */
  async offlineLeaseMaxDays(appId: string): Promise<number> {
    return (await this.apps.offlineLeaseMaxDays(appId)) ?? 0;
  }

  /**
   * Whether the license runtime frees an offline lease's seat at its check-in, by the app's id. An
   * app that is not found does not: the seat stays held until the lease expires.
   */
  async offlineEarlyReturn(appId: string): Promise<boolean> {
    return (await this.apps.offlineEarlyReturn(appId)) ?? false;
  }

  /**
   * Whether the app may log in the member account `<userName>@<enterpriseCode>`: every enterprise's
   * (DOMAIN.md §2), unless it is restricted to its channels; then only an enterprise with a
   * customer in one of them. Judged from the account's enterprise code alone, before any member is
   * looked up, so the answer says nothing of the accounts an enterprise has.
   */
  async servesAccount(app: AppRecord, account: string): Promise<boolean> {
    if (!app.restrictToChannels) return true;
    const at = account.indexOf('@');
    if (at < 0) return false;
    // Enterprise codes are lowercase (enterprise-code.ts), and accounts compare without case.
    return this.apps.servesEnterpriseCode(app.id, account.slice(at + 1).toLowerCase());
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
