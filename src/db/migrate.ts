import { Migrator, type MigrationProvider } from 'kysely';
import type { Db } from './client.js';
import { readMigrationStatus, runMigrations, type MigrationList } from './migration-runner.js';
import * as m0001 from './migrations/0001_platform.js';
import * as m0002 from './migrations/0002_enterprises.js';
import * as m0003 from './migrations/0003_orders.js';
import * as m0021 from './migrations/0021_order_retries.js';
import * as m0020 from './migrations/0020_order_queue.js';
import * as m0030 from './migrations/0030_member_center.js';
import * as m0040 from './migrations/0040_lending.js';
import * as m0080 from './migrations/0080_rate_counter_shards.js';
import * as m0081 from './migrations/0081_assets_fillfactor.js';
import * as m0082 from './migrations/0082_issued_numbers_brin.js';
import * as m0083 from './migrations/0083_issued_number_runs.js';
import * as m0090 from './migrations/0090_issued_number_ranges.js';
import * as m0100 from './migrations/0100_login_sources.js';
import * as m0105 from './migrations/0105_audit_client_request_id.js';
import * as m0110 from './migrations/0110_audit_enterprise.js';
import * as m0120 from './migrations/0120_console.js';
import * as m0130 from './migrations/0130_order_batches_recent.js';
import * as m0140 from './migrations/0140_runtime_leases.js';
import * as m0142 from './migrations/0142_app_runtime_settings.js';
import * as m0141 from './migrations/0141_runtime_signing_keys.js';
import * as m0150 from './migrations/0150_webhooks.js';
import * as m0151 from './migrations/0151_webhook_deliveries_by_endpoint.js';
import * as m0152 from './migrations/0152_order_batches_request_id.js';
import * as m0153 from './migrations/0153_member_page_versions.js';
import * as m0154 from './migrations/0154_member_page_version_once_per_transaction.js';
import * as m0155 from './migrations/0155_offline_lease_seat_hold.js';
import * as m0156 from './migrations/0156_app_lease_and_login_settings.js';
import * as m0160 from './migrations/0160_webhook_fair_delivery.js';
import * as m0165 from './migrations/0165_runtime_activations.js';
import * as m0170 from './migrations/0170_operators.js';
import * as m0171 from './migrations/0171_operator_sign_in.js';
import * as m0172 from './migrations/0172_sso_requests.js';
import * as m0175 from './migrations/0175_usage_rollups.js';
import * as m0178 from './migrations/0178_order_batch_received_body.js';
import * as m0180 from './migrations/0180_credential_lifecycle.js';
import * as m0181 from './migrations/0181_runtime_seat_slots.js';
import * as m0182 from './migrations/0182_runtime_idempotency_and_app_limits.js';
import * as m0183 from './migrations/0183_console_session_second_factor.js';
import * as m0184 from './migrations/0184_license_notices.js';
import * as m0185 from './migrations/0185_console_search.js';
import * as m0186 from './migrations/0186_relay_grants.js';
import * as m0187 from './migrations/0187_runtime_live_use.js';
import * as m0188 from './migrations/0188_relay_reports.js';
import * as m0189 from './migrations/0189_relay_report_overage.js';
import * as m0190 from './migrations/0190_relay_shares.js';

// Listed here rather than read from disk, so migrations run the same under tsx, a bundle or tests.
export const MIGRATIONS: MigrationList = {
  '0001_platform': m0001,
  '0002_enterprises': m0002,
  '0003_orders': m0003,
  '0020_order_queue': m0020,
  '0021_order_retries': m0021,
  '0030_member_center': m0030,
  '0040_lending': m0040,
  '0080_rate_counter_shards': m0080,
  '0081_assets_fillfactor': m0081,
  '0082_issued_numbers_brin': m0082,
  '0083_issued_number_runs': m0083,
  '0090_issued_number_ranges': m0090,
  '0100_login_sources': m0100,
  '0105_audit_client_request_id': m0105,
  '0110_audit_enterprise': m0110,
  '0120_console': m0120,
  '0130_order_batches_recent': m0130,
  '0140_runtime_leases': m0140,
  '0142_app_runtime_settings': m0142,
  '0141_runtime_signing_keys': m0141,
  '0150_webhooks': m0150,
  '0151_webhook_deliveries_by_endpoint': m0151,
  '0152_order_batches_request_id': m0152,
  '0153_member_page_versions': m0153,
  '0154_member_page_version_once_per_transaction': m0154,
  '0155_offline_lease_seat_hold': m0155,
  '0156_app_lease_and_login_settings': m0156,
  '0160_webhook_fair_delivery': m0160,
  '0165_runtime_activations': m0165,
  '0170_operators': m0170,
  '0171_operator_sign_in': m0171,
  '0172_sso_requests': m0172,
  '0175_usage_rollups': m0175,
  '0178_order_batch_received_body': m0178,
  '0180_credential_lifecycle': m0180,
  '0181_runtime_seat_slots': m0181,
  '0182_runtime_idempotency_and_app_limits': m0182,
  '0183_console_session_second_factor': m0183,
  '0184_license_notices': m0184,
  '0185_console_search': m0185,
  '0186_relay_grants': m0186,
  '0187_runtime_live_use': m0187,
  '0188_relay_reports': m0188,
  '0189_relay_report_overage': m0189,
  '0190_relay_shares': m0190,
};

const provider: MigrationProvider = { getMigrations: async () => ({ ...MIGRATIONS }) };

/**
 * Applies pending migrations in one transaction under an advisory lock (see runMigrations), or
 * throws NewerDatabaseError when a newer Keyward has migrated the database. `migrations` is for
 * tests that add one of their own.
 */
export async function migrateToLatest(db: Db, migrations: MigrationList = MIGRATIONS): Promise<string[]> {
  return runMigrations(db, migrations);
}

/** Which of this version's migrations the database has, and which it still lacks, by name. */
export async function migrationStatus(db: Db): Promise<{ applied: string[]; pending: string[] }> {
  return readMigrationStatus(db, MIGRATIONS);
}

/**
 * Applies (or reverts) migrations up to and including `name`: for tests of a migration's data.
 * Kysely's Migrator, which can go down; unordered, as migrations may land out of number order.
 */
export async function migrateTo(db: Db, name: string): Promise<void> {
  const migrator = new Migrator({ db, provider, allowUnorderedMigrations: true });
  const { error } = await migrator.migrateTo(name);
  if (error) throw error instanceof Error ? error : new Error(String(error));
}
