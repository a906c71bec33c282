import { createKeywardClient } from '@keyward/client';

/**
 * What an upgrade fixture holds, as `keyward demo --json` of its version printed it (the part
 * the read-back needs) plus the runtime leases it checked out. Written by
 * scripts/make-upgrade-fixtures.ts into each fixture's expected.json.
 */
export interface FixtureFacts {
  app: { appKey: string; appSecret: string; channel: string };
  enterprise: { enterpriseGlobalId: string; enterpriseName: string; code: string };
  admin: { account: string; password: string; memberGlobalId: string };
  assets: Array<{ assetNum: string; licenseOrderId: string; assignedTo: string | null }>;
  members: Array<{ memberGlobalId: string; account: string; assetNums: string[] }>;
}

/** The answers of the public and admin APIs about a fixture's data, as the test compares them. */
export interface ReadBack {
  enterprise: unknown;
  orders: unknown[];
  enterpriseAssets: unknown;
  members: unknown;
  assetNums: unknown;
  leases: unknown[];
}

/** One database's half of a fixture: what was loaded, and what the APIs answered about it. */
export interface FixtureSide {
  facts: FixtureFacts;
  readBack: ReadBack;
}

/** A fixture's expected.json. */
export interface FixtureExpectation {
  commit: string;
  date: string;
  level: string;
  migrations: string[];
  adminKey: string;
  embedded: FixtureSide;
  postgres: FixtureSide;
}

/** Lease fields that are the data itself; the rest (whether it is live now) depends on the clock. */
const LEASE_FIELDS = ['leaseId', 'assetNum', 'fingerprint', 'createdAt', 'expiresAt', 'endedAt'] as const;

function pick(row: unknown, fields: readonly string[]): Record<string, unknown> {
  const record = row as Record<string, unknown>;
  return Object.fromEntries(fields.filter((f) => f in record).map((f) => [f, record[f]]));
}

async function adminGet(adminUrl: string, adminKey: string, path: string): Promise<unknown> {
  const response = await fetch(`${adminUrl}/admin${path}`, {
    headers: { authorization: `Bearer ${adminKey}` },
  });
  if (!response.ok) throw new Error(`GET /admin${path}: HTTP ${response.status} ${await response.text()}`);
  return response.json();
}

/**
 * Reads a fixture's data back through the server at `baseUrl` (its admin API on the same port, as
 * a server on 127.0.0.1 serves it): the enterprise, every order and the enterprise's assets through
 * the order service, members and asset numbers through the member center as the administrator,
 * and the app's runtime leases, ended ones included.
 */
export async function readBack(baseUrl: string, adminKey: string, facts: FixtureFacts): Promise<ReadBack> {
  const { enterpriseGlobalId } = facts.enterprise;
  const keyward = createKeywardClient({ baseUrl, appKey: facts.app.appKey, appSecret: facts.app.appSecret });
  const asAdmin = createKeywardClient({
    baseUrl,
    appKey: facts.app.appKey,
    appSecret: facts.app.appSecret,
    member: { account: facts.admin.account, password: facts.admin.password },
  });
  const orderIds = [...new Set(facts.assets.map((a) => a.licenseOrderId))].sort();
  const orders: unknown[] = [];
  for (const licenseOrderId of orderIds) {
    orders.push(
      await keyward.GET('/order/api/order/v1/licenseOrder/{licenseOrderId}', {
        params: { path: { licenseOrderId } },
      }),
    );
  }
  const leases = (await adminGet(
    baseUrl,
    adminKey,
    `/runtime/leases?all=1&limit=1000&app=${encodeURIComponent(facts.app.appKey)}`,
  )) as unknown[];
  return {
    enterprise: await adminGet(baseUrl, adminKey, `/enterprises/${encodeURIComponent(enterpriseGlobalId)}`),
    orders,
    enterpriseAssets: await keyward.GET('/order/api/order/v1/asset/{enterpriseGlobalId}/list', {
      params: { path: { enterpriseGlobalId } },
    }),
    members: await asAdmin.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/members', {
      params: { path: { enterpriseGlobalId }, query: { pageNum: 1, pageSize: 100 } },
    }),
    assetNums: await asAdmin.GET('/me/api/v1/enterprise/{enterpriseGlobalId}/asset/assetNums', {
      params: { path: { enterpriseGlobalId } },
    }),
    leases: leases
      .map((lease) => pick(lease, LEASE_FIELDS))
      .sort((a, b) => String(a.leaseId).localeCompare(String(b.leaseId))),
  };
}
