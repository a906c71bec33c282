import type { ColumnType, Generated } from 'kysely';

/** A timestamptz column: read as a Date, written as a Date or left to its default. */
type Stamp = ColumnType<Date, Date | undefined, Date>;
type Json<T> = ColumnType<T, string, string>;

export interface AppsTable {
  id: string;
  app_key: string;
  secret_hash: string;
  name: string;
  scopes: string[];
  channels: string[];
  status: 'pending' | 'active' | 'disabled';
  /** The longest offline lease the license runtime may hand out for the app; 0: none. */
  offline_lease_max_days: Generated<number>;
  /** A checked-in offline lease frees its seat at once, trusting the software deleted it. */
  offline_early_return: Generated<boolean>;
  /** Member logins and user tokens only for enterprises with a customer in the app's channels. */
  restrict_to_channels: Generated<boolean>;
  /** The app's calls a minute, all instances together; null: RATE_LIMIT_PER_MINUTE (migration 0182). */
  rate_limit_per_minute: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface TokensTable {
  token_hash: string;
  app_id: string;
  member_id: number | null;
  kind: 'app' | 'user';
  scopes: string[];
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Stamp;
}

export interface NoncesTable {
  app_id: string;
  nonce: string;
  expires_at: Date;
}

export interface RateCountersTable {
  app_id: string;
  window_start: number;
  /** One of RATE_SHARDS rows per app and window (migration 0080). */
  shard: Generated<number>;
  hits: number;
}

export interface AuditLogTable {
  id: Generated<number>;
  action: string;
  app_id: string | null;
  operator: string | null;
  subject: string | null;
  detail: Json<Record<string, unknown>>;
  request_id: string | null;
  /** The caller's own x-request-id, when sane (migration 0105). */
  client_request_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The enterprise the change belongs to, when it belongs to one (migration 0110). */
  enterprise_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The named operator who caused it, when one did (migration 0170); `operator` holds the name. */
  operator_id: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Stamp;
}

export interface LoginAttemptsTable {
  account: string;
  failures: number;
  locked_until: Date | null;
  updated_at: Stamp;
}

/** Login attempts of one account from one remote address through one app (migration 0100). */
export interface LoginSourceAttemptsTable {
  account: string;
  address: string;
  app_id: string;
  failures: number;
  locked_until: Date | null;
  updated_at: Stamp;
}

export interface EnterprisesTable {
  id: Generated<number>;
  global_id: string;
  name: string;
  code: string;
  member_limit: number | null;
  /** Live (not deleted) members, kept by triggers on `members` (migration 0030). */
  member_count: Generated<number>;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface CustomersTable {
  id: string;
  channel_code: string | null;
  channel_customer_id: string | null;
  crm_customer_id: string | null;
  name: string | null;
  customer_type: string | null;
  branch_code: string | null;
  branch_name: string | null;
  address: string | null;
  security_mobile: string | null;
  enterprise_id: number | null;
  is_default: boolean;
  gongxin: boolean;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface MembersTable {
  id: Generated<number>;
  global_id: string;
  enterprise_id: number;
  user_name: string;
  account: string;
  password_hash: string | null;
  name: string | null;
  department_id: number | null;
  department_name: string | null;
  remark: string | null;
  password_mobile: string | null;
  identity: 'admin' | 'member';
  deleted: boolean;
  created_at: Stamp;
  updated_at: Stamp;
}

/** One issue of asset numbers (order op 9, or a cloud order drawing its own). */
export interface IssuedAssetNumberRunsTable {
  id: Generated<number>;
  app_id: string;
  asset_nums: string[];
  created_at: Stamp;
  /** The same numbers as an `int8multirange` (read as its text form); null only for an empty run. */
  num_ranges: string | null;
}

export interface OrderBatchesTable {
  id: string;
  app_id: string;
  channel_code: string;
  channel_order_id: string;
  body_hash: string;
  sync_mode: 'sync' | 'async';
  payload: Json<unknown> | null;
  result: Json<unknown>;
  /** An async batch not yet applied (migration 0020). */
  pending: Generated<boolean>;
  attempts: Generated<number>;
  next_attempt_at: Date | null;
  /** The request that placed the batch (migration 0152); null before it. */
  request_id: string | null;
  /** An async batch's body as the app sent it (migration 0178); null before it and for sync. */
  received: Json<unknown> | null;
  created_at: Stamp;
}

export interface LicenseOrdersTable {
  id: string;
  batch_id: string;
  app_id: string;
  channel_code: string;
  channel_order_id: string;
  sequence: number;
  customer_id: string | null;
  order_type: string;
  license_type: string;
  src_license_order_id: string | null;
  status: 'pending' | 'completed' | 'failed';
  reason: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface AssetsTable {
  id: string;
  asset_num: string;
  license_type: string;
  customer_id: string;
  grantable: boolean;
  key_chip_type: number | null;
  locked: boolean;
  freezing: boolean;
  borrowed_usb_key: boolean;
  transfered_asset_num: boolean;
  limit_start_time: number | null;
  limit_end_time: number | null;
  revoked: boolean;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface AssetExtendsTable {
  asset_id: string;
  extend_code: string;
  extend_value: string | null;
}

export interface MerchandiseInstancesTable {
  id: Generated<number>;
  asset_id: string;
  parent_id: number | null;
  license_order_id: string;
  channel_order_id: string | null;
  channel_code: string | null;
  customer_id: string;
  license_type: string;
  crm_product_id: string | null;
  parent_crm_product_id: string | null;
  merchandise_num: string | null;
  merchandise_name: string | null;
  parent_merchandise_num: string | null;
  time_duration_expression: string | null;
  src_license_order_id: string | null;
  revoked: boolean;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface ProductInstancesTable {
  id: Generated<number>;
  asset_id: string;
  merchandise_ins_id: number | null;
  license_order_id: string;
  channel_order_id: string | null;
  channel_code: string | null;
  customer_id: string;
  license_type: string;
  crm_product_id: string | null;
  parent_crm_product_id: string | null;
  product_uri: string | null;
  gms_pid: string | null;
  app_key: string | null;
  product_name: string | null;
  product_type: string | null;
  limit_start_time: number | null;
  limit_end_time: number | null;
  limit_concurrent: number | null;
  limit_time_duration: number | null;
  limit_amount: number | null;
  trial: number;
  trial_end_date: number | null;
  time_unit: string | null;
  time_unit_quantity: number | null;
  time_duration_expression: string | null;
  src_license_order_id: string | null;
  passwords: Json<string[]> | null;
  features: Json<unknown[]> | null;
  revoked: boolean;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface AssetAssignmentsTable {
  asset_id: string;
  member_id: number;
  created_at: Stamp;
  updated_at: Stamp;
}

/** A lent lock while it carries entitlements, and the member it is lent to (migration 0040). */
export interface LentLocksTable {
  lock_asset_id: string;
  member_id: number;
  enterprise_id: number;
  created_at: Stamp;
}

/** Moves whenever anything member op 5's page shows changes (migration 0153, ADR 0014). */
export interface MemberPageVersionsTable {
  enterprise_id: number;
  version: number;
  /** The transaction that last moved it, so that one transaction moves it once (migration 0154). */
  moved_by: string | null;
}

/** An asset whose entitlements are lent to a lent lock. */
export interface AssetLendingsTable {
  asset_id: string;
  lock_asset_id: string;
  created_at: Stamp;
}

/** A product instance a lending moved onto the lock: one of its nodes. */
export interface LentProductsTable {
  product_id: number;
  asset_id: string;
  created_at: Stamp;
}

export interface ConsoleSessionsTable {
  id_hash: string;
  kind: 'operator' | 'enterprise';
  token_hash: string | null;
  created_at: Stamp;
  last_seen_at: Stamp;
  expires_at: Date;
  /** The named operator of an operator session; null when it was opened with the admin key. */
  operator_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** Signed in with a password, the second factor still to come (migration 0170). */
  pending_second_factor: ColumnType<boolean, boolean | undefined, boolean>;
  /** Wrong second-factor codes given to this session (migration 0171). */
  second_factor_failures: ColumnType<number, number | undefined, number>;
  /** How an operator session was opened (migration 0171); enterprise sessions say 'password'. */
  sign_in_method: ColumnType<SignInMethod, SignInMethod | undefined, SignInMethod>;
  /** The operator's credential generation the session was opened under (migration 0180). */
  operator_generation: ColumnType<number | null, number | null | undefined, number | null>;
  /** Opened with a one-time password: this session owes the new one (migration 0180). */
  owes_password_change: ColumnType<boolean, boolean | undefined, boolean>;
  /** The admin key's fingerprint, for a session opened with it (migration 0180). */
  key_fingerprint: ColumnType<string | null, string | null | undefined, string | null>;
  /** The second factor that made the session whole, if one did (migration 0183). */
  second_factor: ColumnType<
    SecondFactorKind | null,
    SecondFactorKind | null | undefined,
    SecondFactorKind | null
  >;
}

export type SignInMethod = 'key' | 'password' | 'sso';

/** The second factor an operator gave at sign-in: an authenticator's code or a recovery code. */
export type SecondFactorKind = 'totp' | 'recovery';

/** A consume applied under an Idempotency-Key, and what it answered (migration 0182). */
export interface RuntimeConsumptionsTable {
  app_id: string;
  idempotency_key: string;
  lease_id: string;
  amount: number;
  /** Null until the consume that claimed the key has applied (its transaction then commits both). */
  consumed: number | null;
  amount_limit: number | null;
  created_at: Date;
}

/** One seat a product instance's pool may hand out, and the lease holding it (migration 0181). */
/** A pool grant answered to a relay (migration 0186). */
export interface RelayGrantsTable {
  id: string;
  request_hash: string;
  relay_id: string;
  relay_kid: string;
  fingerprint: string;
  licenses: Json<unknown>;
  token: string;
  starts_at: Date;
  ends_at: Date;
  created_at: Date;
  enterprise_id: number | null;
  returned_at: Date | null;
  /** The shares of usage limits the grant charged, per product instance (migration 0190). */
  shares: Json<unknown> | null;
}

export interface RelayReportsTable {
  id: string;
  relay_id: string;
  grant_id: string;
  issued_at: Date;
  first_hour: Date | null;
  last_hour: Date | null;
  hours: number;
  peak_seats: number;
  /** The most seats past the grant in any hour of the report (migration 0189). */
  overage_peak: Generated<number>;
  /** What the relay had used of its grant's shares of usage limits (migration 0190). */
  shares_used: Json<unknown> | null;
  seat_ms: number;
  refused: number;
  audit_entries: number;
  audit_digest: string;
  imported_at: Date;
}

export interface RuntimeSeatSlotsTable {
  product_id: number;
  pool: 'own' | 'lent';
  slot: number;
  /** When the slot may be free: a hint, confirmed against its lease before it is taken. */
  held_until: ColumnType<Date, Date | string | undefined, Date | string>;
  lease_id: string | null;
  holder_key: string | null;
  fingerprint: string | null;
}

/** One running copy of a licensed product on one machine (migration 0140). */
export interface RuntimeLeasesTable {
  id: string;
  app_id: string;
  product_id: number;
  asset_id: string;
  holder_kind: 'member' | 'lock';
  holder_key: string;
  member_id: number | null;
  lock_asset_id: string | null;
  enterprise_id: number | null;
  pool: 'own' | 'lent';
  fingerprint: string;
  offline: boolean;
  created_at: Date;
  heartbeat_at: Date;
  expires_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  used_ms: Generated<number>;
  /** A checked-in offline lease keeps its seat until then (its expiry); null: no seat after its end. */
  seat_held_until: Date | null;
}

/** What limitTimeDuration and limitAmount are counted against, per product instance. */
export interface RuntimeUsageTable {
  product_id: number;
  used_ms: Generated<number>;
  consumed: Generated<number>;
  /** A time-limited product's live leases (migration 0187). */
  live_leases: Generated<number>;
  /** Minus the sum of those leases' start times, in ms: their use at T is this plus live_leases × T. */
  live_base_ms: Generated<number>;
}

/** A public key that signed offline leases (migration 0141); the private half is never here. */
export interface RuntimeSigningKeysTable {
  kid: string;
  public_jwk: Json<{ kty: 'OKP'; crv: 'Ed25519'; x: string }>;
  created_at: Stamp;
  retired_at: Date | null;
}

/** An app's webhook endpoint (migration 0150). `secret` signs; it is answered only on create/rotate. */
export interface WebhookEndpointsTable {
  id: string;
  app_id: string;
  url: string;
  /** The event types the endpoint receives; null: all of them. */
  event_types: string[] | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  status: Generated<'enabled' | 'disabled'>;
  disabled_reason: string | null;
  consecutive_failures: Generated<number>;
  /** The first failed attempt since the last success; null while the endpoint answers. */
  failing_since: Date | null;
  /** When a worker last claimed one of its deliveries: claims serve the least recent first (migration 0160). */
  last_claimed_at: Date | null;
  /** Attempts in a row that timed out; an answer of any status ends the run. */
  consecutive_timeouts: Generated<number>;
  /** Its deliveries are not claimed before then: set after an attempt timed out. */
  paused_until: Date | null;
  created_at: Stamp;
  updated_at: Stamp;
}

/** The outbox: one row per event, written in the transaction of the change (migration 0150). */
export interface WebhookEventsTable {
  id: string;
  type: string;
  occurred_at: Stamp;
  app_id: string | null;
  channels: string[];
  enterprise_id: number | null;
  data: Json<Record<string, unknown>>;
  request_id: string | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  event_id: string;
  endpoint_id: string;
  status: Generated<'pending' | 'delivered' | 'failed'>;
  attempts: Generated<number>;
  next_attempt_at: Stamp;
  last_attempt_at: Date | null;
  delivered_at: Date | null;
  created_at: Stamp;
  /** Claimed and not yet recorded until then (migration 0160); null once recorded. */
  lease_until: Date | null;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  attempted_at: Stamp;
  status_code: number | null;
  latency_ms: number;
  response_excerpt: string | null;
  error: string | null;
}

/** Offline activations answered (migration 0165): one per app and request nonce. */
export interface RuntimeActivationsTable {
  id: Generated<string>;
  app_id: string;
  nonce: string;
  lease_id: string;
  enterprise_id: number | null;
  asset_num: string;
  crm_product_id: string;
  days: number;
  fingerprint_hash: string;
  via: 'console' | 'operator' | 'admin' | 'runtime';
  created_at: Generated<Date>;
  returned_at: Date | null;
}

export type OperatorRole = 'owner' | 'admin' | 'support' | 'auditor';

/** A named operator of the platform (migration 0170). */
export interface OperatorsTable {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: Generated<'active' | 'disabled'>;
  password_hash: string | null;
  must_change_password: Generated<boolean>;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  /** The last TOTP step accepted: a code is good once. */
  totp_last_step: number | null;
  sso_subject: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  last_sign_in_at: Date | null;
  /** Moved on by whatever must end the operator's console sessions (migration 0180). */
  credential_generation: Generated<number>;
  /** Wrong second-factor codes in the window that started at second_factor_window_start. */
  second_factor_failures: Generated<number>;
  second_factor_window_start: Date | null;
  /** The second-factor step refuses every code until then. */
  second_factor_locked_until: Date | null;
}

export interface OperatorRecoveryCodesTable {
  operator_id: string;
  code_hash: string;
  used_at: Date | null;
}

/** A personal API token: hashed, scoped to a role, expiring (migration 0170). */
export interface OperatorTokensTable {
  id: string;
  operator_id: string;
  name: string;
  role: OperatorRole;
  token_hash: string;
  created_at: Generated<Date>;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
  /** The tokens this one was made from, nearest last (migration 0180). */
  lineage: Generated<string[]>;
}

export interface PlatformSettingsTable {
  id: Generated<boolean>;
  require_two_factor: Generated<boolean>;
  updated_at: Generated<Date>;
}

/** A single sign-on in flight, between the redirect to the provider and its return (migration 0172). */
export interface SsoRequestsTable {
  state_hash: string;
  browser_hash: string;
  nonce: string;
  code_verifier: string;
  created_at: Generated<Date>;
  expires_at: Date;
}

/** A renewal notice sent: one per license (product instance), end and threshold (migration 0184). */
export interface LicenseNoticesTable {
  product_id: number;
  /** The license's end it was sent for, ms since the epoch: a renewal that moves it starts afresh. */
  ends_at: number;
  /** Days before the end it was sent at; 0: the end passed (`license.expired`). */
  days: number;
  created_at: Generated<Date>;
}

export interface Database {
  apps: AppsTable;
  tokens: TokensTable;
  nonces: NoncesTable;
  rate_counters: RateCountersTable;
  audit_log: AuditLogTable;
  login_attempts: LoginAttemptsTable;
  login_source_attempts: LoginSourceAttemptsTable;
  enterprises: EnterprisesTable;
  customers: CustomersTable;
  members: MembersTable;
  issued_asset_number_runs: IssuedAssetNumberRunsTable;
  order_batches: OrderBatchesTable;
  license_orders: LicenseOrdersTable;
  assets: AssetsTable;
  asset_extends: AssetExtendsTable;
  merchandise_instances: MerchandiseInstancesTable;
  product_instances: ProductInstancesTable;
  asset_assignments: AssetAssignmentsTable;
  lent_locks: LentLocksTable;
  member_page_versions: MemberPageVersionsTable;
  asset_lendings: AssetLendingsTable;
  lent_products: LentProductsTable;
  console_sessions: ConsoleSessionsTable;
  runtime_leases: RuntimeLeasesTable;
  runtime_seat_slots: RuntimeSeatSlotsTable;
  relay_grants: RelayGrantsTable;
  relay_reports: RelayReportsTable;
  runtime_consumptions: RuntimeConsumptionsTable;
  runtime_usage: RuntimeUsageTable;
  runtime_activations: RuntimeActivationsTable;
  operators: OperatorsTable;
  operator_recovery_codes: OperatorRecoveryCodesTable;
  operator_tokens: OperatorTokensTable;
  platform_settings: PlatformSettingsTable;
  sso_requests: SsoRequestsTable;
  runtime_signing_keys: RuntimeSigningKeysTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  license_notices: LicenseNoticesTable;
}
