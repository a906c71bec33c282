import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { RUNTIME_PREFIX } from '../../src/http/surface.js';
import { appToken } from '../support/fixtures.js';
import { nonce, type Harness } from '../support/harness.js';
import { assetWorld, buyAsset, productSpec, type AssetWorld } from '../support/order-fixtures.js';

type Reply = Awaited<ReturnType<Harness['app']['inject']>>;

export interface RuntimeWorld extends AssetWorld {
  /** An app token of the world's app, which holds auth_runtime too. */
  runtimeToken: string;
  /** A runtime call through the world's app; with `userTok`, for that member. */
  runtime: (path: string, body: unknown, userTok?: string) => Promise<Reply>;
}

export interface Lease {
  leaseId: string;
  status: 'granted' | 'resumed';
  assetNum: string;
  expiresAt: number;
  heartbeatIntervalSeconds: number;
  limits: { concurrent: number | null; timeDurationSeconds: number | null; amount: number | null };
  offlineLease: string | null;
}

export function runtimeCaller(h: Harness, token: string) {
  return (path: string, body: unknown, userTok?: string): Promise<Reply> =>
    h.app.inject({
      method: 'POST',
      url: `${RUNTIME_PREFIX}${path}?g_nonce=${nonce()}`,
      headers: { authorization: `Bearer ${token}`, ...(userTok === undefined ? {} : { usertoken: userTok }) },
      payload: body as object,
    });
}

export async function runtimeWorld(h: Harness): Promise<RuntimeWorld> {
  const world = await assetWorld(h, ['auth_order', 'auth_me', 'auth_runtime']);
  const runtimeToken = await appToken(h, world.app);
  return { ...world, runtimeToken, runtime: runtimeCaller(h, runtimeToken) };
}

export function fingerprint(): string {
  return `fp-${randomBytes(8).toString('hex')}`;
}

export function leaseOf(response: Reply): Lease {
  const body = response.json() as { code: unknown; data: Lease };
  expect(response.statusCode, response.body).toBe(200);
  expect(body.code).toBe(0);
  return body.data;
}

export function refusalOf(response: Reply, code: string): string {
  const body = response.json() as { code: unknown; message: string };
  expect(response.statusCode, response.body).toBe(299);
  expect(body.code, response.body).toBe(code);
  return body.message;
}

export function checkOut(
  world: RuntimeWorld,
  body: Record<string, unknown>,
  userTok?: string,
): Promise<Reply> {
  return world.runtime('/leases', body, userTok);
}

export function heartbeat(world: RuntimeWorld, lease: { leaseId: string }, fp: string): Promise<Reply> {
  return world.runtime(`/leases/${lease.leaseId}/heartbeat`, { fingerprint: fp });
}

export function checkIn(world: RuntimeWorld, lease: { leaseId: string }, fp: string): Promise<Reply> {
  return world.runtime(`/leases/${lease.leaseId}/check-in`, { fingerprint: fp });
}

/** A fresh lock of the world's customer carrying one product (productSpec with `overrides`). */
export async function lockWith(
  world: AssetWorld,
  overrides: Record<string, unknown> = {},
): Promise<{ assetNum: string; crmProductId: string }> {
  const product = productSpec(overrides);
  const assetNum = await buyAsset(world, [product]);
  return { assetNum, crmProductId: product.crmProductId as string };
}
