import { expect } from 'vitest';
import type { AuditRecord } from '../../src/domain/audit/audit.repository.js';
import { ADMIN_KEY, startHarness, type Harness } from '../support/harness.js';
import {
  addMember,
  assetIdOf,
  assetWorld,
  assign,
  borrow,
  buyAsset,
  buyLentLock,
  okData,
  type AssetWorld,
  type MemberSession,
} from '../support/order-fixtures.js';

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

/** GET /admin/audit with these query parameters, as the CLI sends them. */
export function auditCall(h: Harness, query: Record<string, string | number> = {}): Promise<Reply> {
  const params = new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
  return h.app.inject({
    method: 'GET',
    url: `/admin/audit?${params.toString()}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  });
}

/** The entries the filters select, newest first; the call must succeed. */
export async function audit(h: Harness, query: Record<string, string | number>): Promise<AuditRecord[]> {
  const response = await auditCall(h, query);
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as AuditRecord[];
}

/** The entries of one subject, oldest first: the order the changes happened in. */
export async function history(h: Harness, subject: string): Promise<AuditRecord[]> {
  return (await audit(h, { subject })).reverse();
}

/** The actions of one subject, oldest first. */
export async function actionsOf(h: Harness, subject: string): Promise<string[]> {
  return (await history(h, subject)).map((e) => e.action);
}

/** The app's internal id: what `appId` of an entry holds. */
export async function appIdOf(h: Harness, appKey: string): Promise<string> {
  const row = await h.database.db
    .selectFrom('apps')
    .select('id')
    .where('app_key', '=', appKey)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** None of these strings (secrets, passwords, hashes, tokens) appears in any of the entries. */
export function expectNoSecrets(entries: AuditRecord[], secrets: string[]): void {
  const text = JSON.stringify(entries);
  for (const secret of secrets) expect(text).not.toContain(secret);
  for (const e of entries) {
    expect(Object.keys(e.detail).join(',')).not.toMatch(/password|secret|hash|token(?!sRevoked)/i);
  }
}

/** A server, an enterprise bound the way a channel binds one, and its app's id. */
export async function startAuditWorld(): Promise<{ h: Harness; world: AssetWorld; appId: string }> {
  const h = await startHarness();
  const world = await assetWorld(h);
  return { h, world, appId: await appIdOf(h, world.app.appKey) };
}

/** A fresh member holding a fresh asset (with these products) lent to a fresh lent lock. */
export async function lentAsset(
  world: AssetWorld,
  products?: unknown[],
): Promise<{ member: MemberSession; asset: string; lock: string }> {
  const member = await addMember(world);
  const lock = await buyLentLock(world);
  const asset = await buyAsset(world, products);
  await assign(world, member.globalId, [asset]);
  okData(await borrow(member, member.globalId, lock, [await assetIdOf(world, asset)]));
  return { member, asset, lock };
}
