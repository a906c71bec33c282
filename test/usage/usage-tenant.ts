import { enterpriseClient, type ConsoleClient } from '../support/console-client.js';
import { userToken } from '../support/fixtures.js';
import type { Harness } from '../support/harness.js';
import { addMember, assign } from '../support/order-fixtures.js';
import {
  checkOut,
  fingerprint,
  leaseOf,
  lockWith,
  refusalOf,
  runtimeWorld,
  type RuntimeWorld,
} from '../http/runtime-helpers.js';

/** An enterprise of the usage tests: its product, the lock carrying it, and its employee. */
export interface RefusedTenant {
  world: RuntimeWorld;
  product: string;
  assetNum: string;
  account: string;
}

/**
 * An employee holding the one seat of a lock's product (assigned to him) and refused a second
 * machine (90005), through the runtime as licensed software would: a holder and a refusal now.
 */
export async function refusedTenant(h: Harness, world?: RuntimeWorld): Promise<RefusedTenant> {
  const runtime = world ?? (await runtimeWorld(h));
  const lock = await lockWith(runtime, { limitConcurrent: 1 });
  const member = await addMember(runtime);
  await assign(runtime, member.globalId, [lock.assetNum]);
  const token = await userToken(h, runtime.app, member.account, member.password);
  const take = () =>
    checkOut(runtime, { crmProductId: lock.crmProductId, fingerprint: fingerprint() }, token);
  leaseOf(await take());
  refusalOf(await take(), '90005');
  return { world: runtime, product: lock.crmProductId, assetNum: lock.assetNum, account: member.account };
}

/** The same, with its administrator signed in to the console. */
export interface ConsoleTenant extends RefusedTenant {
  console: ConsoleClient;
}

export async function consoleTenant(h: Harness): Promise<ConsoleTenant> {
  const refused = await refusedTenant(h);
  const { admin } = refused.world;
  return { ...refused, console: await enterpriseClient(h, admin.account, admin.password) };
}
