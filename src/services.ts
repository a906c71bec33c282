import type { Config } from './config.js';
import type { Db } from './db/client.js';
import { AppsService } from './domain/apps/apps.service.js';
import { AssetNumbersService } from './domain/asset-numbers/asset-numbers.service.js';
import { AssetsService } from './domain/assets/assets.service.js';
import { AuditRepository } from './domain/audit/audit.repository.js';
import { BackupService } from './domain/backup/backup.service.js';
import { OperatorsService } from './domain/operators/operators.service.js';
import { TwoFactorService } from './domain/operators/two-factor.service.js';
import { SsoService } from './domain/sso/sso.service.js';
import { OperatorSignInService } from './domain/console/operator-sign-in.service.js';
import { ConsoleSessionsService } from './domain/console/console-sessions.service.js';
import { CustomersService } from './domain/customers/customers.service.js';
import { EnterprisesService } from './domain/enterprises/enterprises.service.js';
import { DbGate } from './domain/gate/db-gate.js';
import type { RequestGate } from './domain/gate/gate.js';
import { RedisGate } from './domain/gate/redis-gate.js';
import { TokenRequestLimits } from './domain/gate/token-limits.js';
import { LendingService, releaseMemberLendings } from './domain/lending/lending.service.js';
import { LicensesService } from './domain/licenses/licenses.service.js';
import { MemberAssetsService } from './domain/member-assets/member-assets.service.js';
import { LoginService } from './domain/members/login.service.js';
import { MemberAdminService } from './domain/members/member-admin.service.js';
import { MembersService } from './domain/members/members.service.js';
import { OrdersService } from './domain/orders/orders.service.js';
import { grantTermsOf } from './domain/relay/grant-terms.js';
import { RelayGrantService } from './domain/relay/relay-grant.service.js';
import { RelayKeys, type RelayKeyMaterial } from './domain/relay/relay-keys.js';
import { RelayLicensesService } from './domain/relay/relay-licenses.service.js';
import { RelayServingService } from './domain/relay/relay-serving.service.js';
import { RelayReportService } from './domain/relay/relay-report.service.js';
import { RelayReportsService } from './domain/relay/relay-reports.service.js';
import { RelayReturnService } from './domain/relay/relay-return.service.js';
import { ActivationService } from './domain/activation/activation.service.js';
import { RuntimeService } from './domain/runtime/runtime.service.js';
import { RuntimeKeysService, type RuntimeKeys } from './domain/runtime-keys/runtime-keys.service.js';
import { ServerStatusService } from './domain/status/server-status.service.js';
import { TokensService } from './domain/tokens/tokens.service.js';
import { RollupService } from './domain/usage/rollup.service.js';
import { UsageService } from './domain/usage/usage.service.js';
import { SearchService } from './domain/search/search.service.js';
import { LicenseViewsService } from './domain/licenses/license-views.service.js';
import { WebhookDeliveryService } from './domain/webhooks/delivery.service.js';
import { WebhookEndpointsService } from './domain/webhooks/endpoints.service.js';
import { WebhookRetentionService } from './domain/webhooks/retention.service.js';
import { WebhookAdminService } from './domain/webhooks/webhook-admin.service.js';

/** Every service the surfaces call, built once per process around one database handle. */
export interface Services {
  apps: AppsService;
  tokens: TokensService;
  login: LoginService;
  members: MembersService;
  memberAdmin: MemberAdminService;
  gate: RequestGate;
  tokenLimits: TokenRequestLimits;
  audit: AuditRepository;
  assetNumbers: AssetNumbersService;
  enterprises: EnterprisesService;
  customers: CustomersService;
  orders: OrdersService;
  assets: AssetsService;
  memberAssets: MemberAssetsService;
  lending: LendingService;
  licenses: LicensesService;
  status: ServerStatusService;
  consoleSessions: ConsoleSessionsService;
  runtime: RuntimeService;
  activation: ActivationService;
  relayGrants: RelayGrantService;
  /** A relay's grant made into its licenses (used by `keyward relay serve` only). */
  relayLicenses: RelayLicensesService;
  /** Relays' usage reports imported at the vendor. */
  relayReports: RelayReportsService;
  /** What `/relay` shows; undefined unless this process is a relay. */
  relayServing: RelayServingService | undefined;
  /** On a relay: its usage report for the vendor (`keyward relay report`). */
  relayReport: RelayReportService | undefined;
  /** On a relay: its grant given back (`keyward relay return`). */
  relayReturn: RelayReturnService | undefined;
  runtimeKeys: RuntimeKeys;
  webhookEndpoints: WebhookEndpointsService;
  webhookDeliveries: WebhookDeliveryService;
  webhookAdmin: WebhookAdminService;
  webhookRetention: WebhookRetentionService;
  backup: BackupService;
  operators: OperatorsService;
  twoFactor: TwoFactorService;
  operatorSignIn: OperatorSignInService;
  usage: UsageService;
  usageRollups: RollupService;
  search: SearchService;
  licenseViews: LicenseViewsService;
  /** Operators' single sign-on; undefined when OIDC_* is not configured. */
  sso: SsoService | undefined;
}

/** What tests may replace: the runtime's clock. */
export interface ServiceOptions {
  now?: () => number;
  /** The handle without requests' time limit, for backups; the limited one when not given. */
  unlimitedDb?: Db;
  /** The admin key: sessions opened with it end when it changes. */
  adminKey?: string;
  /** On a relay (`keyward relay serve`): its key and grant, which sign its leases. */
  relay?: RelayKeyMaterial;
}

export function createServices(db: Db, config: Config, options: ServiceOptions = {}): Services {
  const gateSettings = {
    nonceTtlSeconds: config.tokenTtlSeconds,
    limitPerMinute: config.rateLimitPerMinute,
  };
  const assetNumbers = new AssetNumbersService(db, config.region);
  const gate: RequestGate =
    config.redisUrl === undefined
      ? new DbGate(db, gateSettings)
      : new RedisGate(config.redisUrl, gateSettings, db);
  const tokens = new TokensService(db, config.tokenTtlSeconds);
  const login = new LoginService(db);
  const tokenLimits = new TokenRequestLimits(gate, config.tokenRate);
  const twoFactor = new TwoFactorService(db, options.now);
  const apps = new AppsService(db);
  const runtimeKeys: RuntimeKeys =
    options.relay === undefined
      ? new RuntimeKeysService(db, { variable: config.runtimeSigningKey, dataDir: config.dataDir })
      : new RelayKeys(options.relay);
  const runtime = new RuntimeService(db, {
    settings: config.runtime,
    signer: runtimeKeys,
    offlineDaysOf: (appId) => apps.offlineLeaseMaxDays(appId),
    offlineEarlyReturnOf: (appId) => apps.offlineEarlyReturn(appId),
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(config.databaseUrl === undefined ? {} : { checkOutTurns: checkOutTurnsOf(config.database) }),
    ...(options.relay === undefined ? {} : { grantTerms: grantTermsOf(options.relay.grant) }),
  });
  const operatorSignIn = new OperatorSignInService(db, { login, tokenLimits, twoFactor });
  const enterprises = new EnterprisesService(db);
  const orders = new OrdersService(db, assetNumbers, config.limits);
  const relayLicenses = new RelayLicensesService(db, { apps, enterprises, assetNumbers, orders });
  const usageRollups = new RollupService(
    db,
    config.usage,
    options.now === undefined ? {} : { now: options.now },
  );
  return {
    apps,
    tokens,
    login,
    members: new MembersService(db, {
      releaseOnDelete: [releaseMemberLendings],
      keptPageMembers: config.limits.keptPageMembers,
    }),
    memberAdmin: new MemberAdminService(db),
    gate,
    tokenLimits,
    audit: new AuditRepository(db),
    assetNumbers,
    enterprises,
    customers: new CustomersService(db),
    orders,
    assets: new AssetsService(db),
    memberAssets: new MemberAssetsService(db),
    lending: new LendingService(db),
    licenses: new LicensesService(db, config.licenses, options.now),
    status: new ServerStatusService(db, config.adminKeyEnabled),
    consoleSessions: new ConsoleSessionsService(db, {
      tokens,
      login,
      tokenLimits,
      adminKey: {
        value: options.adminKey ?? '',
        enabled: config.adminKeyEnabled && options.adminKey !== undefined,
      },
    }),
    runtime,
    activation: new ActivationService(db, {
      runtime,
      signer: runtimeKeys,
      onRelay: options.relay !== undefined,
      ...(options.now === undefined ? {} : { now: options.now }),
    }),
    relayGrants: new RelayGrantService(db, {
      signer: runtimeKeys,
      ...(options.now === undefined ? {} : { now: options.now }),
    }),
    relayLicenses,
    relayReports: new RelayReportsService(db, options.now),
    relayReport:
      options.relay === undefined
        ? undefined
        : new RelayReportService(db, {
            relay: options.relay,
            rollups: usageRollups,
            ...(options.now === undefined ? {} : { now: options.now }),
          }),
    relayReturn:
      options.relay === undefined
        ? undefined
        : new RelayReturnService({
            relay: options.relay,
            licenses: relayLicenses,
            ...(options.now === undefined ? {} : { now: options.now }),
          }),
    relayServing:
      options.relay === undefined
        ? undefined
        : new RelayServingService(options.relay.grant, {
            runtime,
            licenses: relayLicenses,
            ...(options.now === undefined ? {} : { now: options.now }),
          }),
    runtimeKeys,
    webhookEndpoints: new WebhookEndpointsService(db, config.webhooks, options.now),
    webhookDeliveries: new WebhookDeliveryService(db, config.webhooks),
    webhookAdmin: new WebhookAdminService(db, options.now),
    webhookRetention: new WebhookRetentionService(db, config.webhooks.retentionDays, options.now),
    operators: new OperatorsService(db, options.now),
    twoFactor,
    operatorSignIn,
    usage: new UsageService(db, options.now),
    search: new SearchService(db),
    licenseViews: new LicenseViewsService(db, options.now),
    usageRollups,
    sso: config.sso === undefined ? undefined : new SsoService(db, config.sso, operatorSignIn, gate),
    backup: new BackupService(options.unlimitedDb ?? db, {
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
    }),
  };
}

/**
 * Connections a check-out wave leaves to the rest of the instance: the heartbeat batcher's two
 * statements and one for everything else (the gate, reads, the console).
 */
const CONNECTIONS_KEPT_FROM_CHECK_OUTS = 3;

function checkOutTurnsOf(database: Config['database']): { inFlight: number; waitMs: number } {
  return {
    inFlight: Math.max(1, database.poolSize - CONNECTIONS_KEPT_FROM_CHECK_OUTS),
    waitMs: database.poolWaitMs,
  };
}
