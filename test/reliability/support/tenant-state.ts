import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../../src/db/client.js';

/** A digest per table of one tenant's rows: equal digests, unchanged data. */
export type TenantState = Record<string, string>;

/** One `md5` over the rows of `from` (an aliased table `t` with its scope), in a stable order. */
const digest = (from: RawBuilder<unknown>) =>
  sql`(select md5(coalesce(string_agg(t::text, '|' order by t::text), '')) from ${from})`;

async function digests(db: Db, parts: Record<string, RawBuilder<unknown>>): Promise<TenantState> {
  const columns = Object.entries(parts).map(([name, from]) => sql`${digest(from)} as ${sql.ref(name)}`);
  const row = await sql<TenantState>`select ${sql.join(columns)}`.execute(db);
  return row.rows[0] ?? {};
}

/**
 * Everything an order-service app can reach or write: the customers of its channel and their
 * enterprises, members, assets and products, and its own batches, orders, audit rows and issued
 * numbers. Nonces and rate counters are left out: the guard spends a nonce before any check.
 */
export function orderTenantState(db: Db, tenant: { appId: string; channel: string }): Promise<TenantState> {
  const customers = sql`(select id from customers where channel_code = ${tenant.channel})`;
  const enterprises = sql`(select enterprise_id from customers where channel_code = ${tenant.channel} and enterprise_id is not null)`;
  const assets = sql`(select id from assets where customer_id in ${customers})`;
  return digests(db, {
    customers: sql`customers t where channel_code = ${tenant.channel} or enterprise_id in ${enterprises}`,
    enterprises: sql`enterprises t where id in ${enterprises}`,
    members: sql`members t where enterprise_id in ${enterprises}`,
    assets: sql`assets t where customer_id in ${customers}`,
    asset_extends: sql`asset_extends t where asset_id in ${assets}`,
    products: sql`product_instances t where asset_id in ${assets}`,
    merchandise: sql`merchandise_instances t where asset_id in ${assets}`,
    assignments: sql`asset_assignments t where asset_id in ${assets}`,
    lent_locks: sql`lent_locks t where lock_asset_id in ${assets}`,
    lendings: sql`asset_lendings t where asset_id in ${assets}`,
    batches: sql`order_batches t where app_id = ${tenant.appId}`,
    orders: sql`license_orders t where app_id = ${tenant.appId}`,
    // Append-only and fast-growing under the fuzz: their size and last row tell any change.
    audit: sql`(select count(*), max(id) from audit_log where app_id = ${tenant.appId}) t`,
    issued: sql`(select count(*), max(id) from issued_asset_number_runs where app_id = ${tenant.appId}) t`,
  });
}

/**
 * Everything a member-center caller can reach in its enterprise: the enterprise, its members and
 * their sessions and login counters, its customers' assets, products and assignments.
 */
export function memberTenantState(db: Db, enterprise: { id: number; code: string }): Promise<TenantState> {
  const members = sql`(select id from members where enterprise_id = ${enterprise.id})`;
  const customers = sql`(select id from customers where enterprise_id = ${enterprise.id})`;
  const assets = sql`(select id from assets where customer_id in ${customers})`;
  return digests(db, {
    enterprise: sql`enterprises t where id = ${enterprise.id}`,
    members: sql`members t where enterprise_id = ${enterprise.id}`,
    // A session's life, not its hash: revoking one is the change that matters.
    tokens: sql`(select member_id, kind, expires_at, revoked_at from tokens where member_id in ${members}) t`,
    logins: sql`login_attempts t where account like ${`%@${enterprise.code}`}`,
    login_sources: sql`login_source_attempts t where account like ${`%@${enterprise.code}`}`,
    customers: sql`customers t where enterprise_id = ${enterprise.id}`,
    assets: sql`assets t where customer_id in ${customers}`,
    products: sql`product_instances t where asset_id in ${assets}`,
    merchandise: sql`merchandise_instances t where asset_id in ${assets}`,
    assignments: sql`asset_assignments t where asset_id in ${assets} or member_id in ${members}`,
    lent_locks: sql`lent_locks t where enterprise_id = ${enterprise.id} or member_id in ${members}`,
    lendings: sql`asset_lendings t where asset_id in ${assets}`,
    lent_products: sql`lent_products t where asset_id in ${assets}`,
  });
}

/**
 * What a runtime app can write: its leases and the usage of the products they run. Audit rows are
 * left out: a refused check-out is recorded there on purpose.
 */
export function runtimeTenantState(db: Db, appId: string): Promise<TenantState> {
  const products = sql`(select product_id from runtime_leases where app_id = ${appId})`;
  return digests(db, {
    leases: sql`runtime_leases t where app_id = ${appId}`,
    usage: sql`runtime_usage t where product_id in ${products}`,
  });
}

/** An app's webhook endpoints (secrets included: a refused rotation must not change them). */
export function webhooksTenantState(db: Db, appId: string): Promise<TenantState> {
  return digests(db, { endpoints: sql`webhook_endpoints t where app_id = ${appId}` });
}

/** The objects the admin fuzzer aims at: apps, their enterprises, operators and what hangs off them. */
export interface AdminScope {
  appKeys: string[];
  appIds: string[];
  enterpriseGlobalIds: string[];
  operatorIds: string[];
  /** The operator whose token makes the calls: every act it carries out is audited in its name. */
  caller: string;
}

/**
 * What an admin call can change among the scope's objects. Token use (`last_used_at`) is left out:
 * the guard stamps it on any call. Audit rows count only the caller's own: admin writes are audited
 * naming the operator, and other tests write rows of their own at the same time on PostgreSQL.
 */
export function adminTenantState(db: Db, scope: AdminScope): Promise<TenantState> {
  const list = (values: string[]) => sql`(${sql.join(values.length === 0 ? [''] : values)})`;
  const enterprises = sql`(select id from enterprises where global_id in ${list(scope.enterpriseGlobalIds)})`;
  const endpoints = sql`(select id from webhook_endpoints where app_id in ${list(scope.appIds)})`;
  return digests(db, {
    apps: sql`apps t where app_key in ${list(scope.appKeys)}`,
    enterprises: sql`enterprises t where id in ${enterprises}`,
    members: sql`members t where enterprise_id in ${enterprises}`,
    operators: sql`operators t where id in ${list(scope.operatorIds)}`,
    tokens: sql`(select id, operator_id, name, role, token_hash, expires_at, revoked_at
      from operator_tokens where operator_id in ${list(scope.operatorIds)}) t`,
    recovery: sql`operator_recovery_codes t where operator_id in ${list(scope.operatorIds)}`,
    endpoints: sql`webhook_endpoints t where id in ${endpoints}`,
    deliveries: sql`webhook_deliveries t where endpoint_id in ${endpoints}`,
    leases: sql`runtime_leases t where app_id in ${list(scope.appIds)}`,
    activations: sql`runtime_activations t where app_id in ${list(scope.appIds)}`,
    // Simulated usage (the demo's) is written here, and audited nowhere.
    usage: sql`(select
      (select count(*) from usage_hourly where app_id in ${list(scope.appIds)}),
      (select count(*) from usage_daily where app_id in ${list(scope.appIds)}),
      (select count(*) from usage_denials where app_id in ${list(scope.appIds)})) t`,
    audit: sql`(select count(*), max(id) from audit_log where operator_id = ${scope.caller}) t`,
  });
}

/** The names of the tables whose digest differs. */
export function changedTables(before: TenantState, after: TenantState): string[] {
  return Object.keys(after).filter((name) => before[name] !== after[name]);
}
