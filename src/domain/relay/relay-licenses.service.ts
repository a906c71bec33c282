import type { Db } from '../../db/client.js';
import type { AssetNumbersService } from '../asset-numbers/asset-numbers.service.js';
import { AppsRepository } from '../apps/apps.repository.js';
import type { AppsService } from '../apps/apps.service.js';
import type { AuditActor } from '../audit/audit-actions.js';
import type { EnterprisesService } from '../enterprises/enterprises.service.js';
import type { OrderInput } from '../orders/order-model.js';
import type { OrdersService } from '../orders/orders.service.js';
import type { PoolGrantClaims } from './pool-grant.js';
import type { UsedShare } from './relay-return.js';
import { RelayLicensesRepository, type ServedProduct } from './relay-licenses.repository.js';

/**
 * The channel a relay's licenses belong to on the relay: apps for the network's machines list it
 * (`keyward app create --channel RELAY`), as an online app lists its channels.
 */
export const RELAY_CHANNEL = 'RELAY';
/** The relay's one customer: the closed network the grant serves. */
const RELAY_CUSTOMER = 'relay';
/** The relay's own app, which places the grant's orders; it takes no calls (it has no scope to). */
const GRANT_APP_NAME = 'relay grant';
/** A network lock: what a relay's license is to the machines behind it. */
const RELAY_LICENSE_TYPE = 'normal_recover_lan_usbkey' as const;

const RELAY_ACTOR: AuditActor = { appId: null, operator: 'relay', requestId: null, clientRequestId: null };

export interface AppliedGrant {
  /** False when the relay's database already served exactly this grant. */
  applied: boolean;
  products: ServedProduct[];
}

/**
 * A relay's grant made into its licenses, through the order service as a channel's order would
 * make them: one lock per granted license with the vendor's asset number, one product per granted
 * product, its seats the granted seats, ending when the grant ends. So the relay's runtime judges
 * seats, dates and products with exactly the rules the vendor's does, and its leases say no more
 * than the grant gives. A new grant (a renewal) revokes what the last one gave and places what it
 * gives, in one batch: all of it or none.
 */
export class RelayLicensesService {
  constructor(
    private readonly db: Db,
    private readonly deps: {
      apps: AppsService;
      enterprises: EnterprisesService;
      assetNumbers: AssetNumbersService;
      orders: OrdersService;
    },
  ) {}

  async apply(grant: PoolGrantClaims): Promise<AppliedGrant> {
    const app = await this.grantApp();
    await this.deps.enterprises.bind(
      {
        channelCode: RELAY_CHANNEL,
        channelCustomerId: RELAY_CUSTOMER,
        customerName: grant.sub,
        enterpriseName: `Relay ${grant.sub}`,
      },
      { ...RELAY_ACTOR, appId: app.appId },
    );
    const served = await this.served();
    if (sameAsServed(grant, served)) return { applied: false, products: served };
    await this.deps.assetNumbers.recordIssued(
      app.appId,
      grant.licenses.map((l) => l.assetNum),
    );
    const withdrawn = served.filter((p) => p.crmProductId !== null);
    const orders: OrderInput[] = [
      ...byAsset(withdrawn).map(([assetNum, products], i) => ({
        sequence: i + 1,
        channelCustomerId: RELAY_CUSTOMER,
        licenseType: RELAY_LICENSE_TYPE,
        orderType: 'delete_product' as const,
        assets: [{ assetNos: [assetNum], products: products.map((p) => ({ crmProductId: p.crmProductId })) }],
      })),
    ];
    for (const [assetNum, licenses] of byAsset(grant.licenses)) {
      orders.push({
        sequence: orders.length + 1,
        channelCustomerId: RELAY_CUSTOMER,
        licenseType: RELAY_LICENSE_TYPE,
        orderType: 'new_buy',
        assets: [
          {
            assetNos: [assetNum],
            products: licenses.map((l) => ({
              crmProductId: l.crmProductId,
              // A grant names its products by crmProductId alone; that is their uri here too.
              productUri: l.crmProductId,
              limitConcurrent: l.seats,
              limitStartDate: grant.nbf * 1000,
              limitEndDate: grant.exp * 1000,
              // The grant's shares of the license's usage limits are the relay's whole limits:
              // counted from nothing for each grant, as the vendor charged each grant its share.
              ...(l.timeSeconds === undefined ? {} : { limitTimeDuration: l.timeSeconds }),
              ...(l.amount === undefined ? {} : { limitAmount: l.amount }),
            })),
          },
        ],
      });
    }
    await this.deps.orders.submit(
      app,
      {
        channelCode: RELAY_CHANNEL,
        channelOrderId: `grant-${grant.jti}`,
        syncMode: 'sync',
        orderList: orders,
      },
      { ...RELAY_ACTOR, appId: app.appId },
    );
    return { applied: true, products: await this.served() };
  }

  /**
   * Revokes every product the grant gave (a return): the relay's runtime then refuses its
   * check-outs and heartbeats as it would any revoked license's.
   */
  async withdraw(grant: PoolGrantClaims): Promise<number> {
    const app = await this.grantApp();
    const served = (await this.served()).filter((p) => p.crmProductId !== null);
    if (served.length === 0) return 0;
    await this.deps.orders.submit(
      app,
      {
        channelCode: RELAY_CHANNEL,
        channelOrderId: `return-${grant.jti}`,
        syncMode: 'sync',
        orderList: byAsset(served).map(([assetNum, products], i) => ({
          sequence: i + 1,
          channelCustomerId: RELAY_CUSTOMER,
          licenseType: RELAY_LICENSE_TYPE,
          orderType: 'delete_product' as const,
          assets: [
            { assetNos: [assetNum], products: products.map((p) => ({ crmProductId: p.crmProductId })) },
          ],
        })),
      },
      { ...RELAY_ACTOR, appId: app.appId },
    );
    return served.length;
  }

  /** What the relay has used of its grant's shares at `now` (usedSharesOf). */
  usedShares(grant: PoolGrantClaims, now: number, committed = false): Promise<UsedShare[]> {
    return usedSharesOf(this.db, grant, now, committed);
  }

  /** Whether the relay's database serves exactly `grant`'s licenses now. */
  async serves(grant: PoolGrantClaims): Promise<boolean> {
    return sameAsServed(grant, await this.served());
  }

  /** What the relay's database holds of its grant now: its live products. */
  served(): Promise<ServedProduct[]> {
    return new RelayLicensesRepository(this.db).servedProducts(RELAY_CHANNEL, RELAY_CUSTOMER);
  }

  /** The relay's own app: made at its first start, found by name and channel afterwards. */
  private async grantApp(): Promise<{ appId: string; channels: string[] }> {
    const own = (await this.deps.apps.list()).find(
      (a) => a.name === GRANT_APP_NAME && a.channels.length === 1 && a.channels[0] === RELAY_CHANNEL,
    );
    const appKey =
      own?.appKey ??
      (
        await this.deps.apps.create({
          name: GRANT_APP_NAME,
          scopes: ['auth_order'],
          channels: [RELAY_CHANNEL],
          pending: false,
        })
      ).appKey;
    const record = await new AppsRepository(this.db).findByKey(appKey);
    if (record === undefined) throw new Error("the relay's own app vanished");
    return { appId: record.id, channels: record.channels };
  }
}

/**
 * What a relay has used of each share of a usage limit its grant holds, at `now`, as its reports
 * and (`committed`: each live lease counted to its expiry) its returns say it: seconds of use
 * (rounded up: the vendor gives back no more than went unused) and units of amount.
 */
export async function usedSharesOf(
  db: Db,
  grant: PoolGrantClaims,
  now: number,
  committed = false,
): Promise<UsedShare[]> {
  const use = await new RelayLicensesRepository(db).servedUse(
    RELAY_CHANNEL,
    RELAY_CUSTOMER,
    new Date(now),
    committed,
  );
  return grant.licenses.flatMap((l) => {
    if (l.timeSeconds === undefined && l.amount === undefined) return [];
    const found = use.find((u) => u.assetNum === l.assetNum && u.crmProductId === l.crmProductId);
    return [
      {
        assetNum: l.assetNum,
        crmProductId: l.crmProductId ?? '',
        ...(l.timeSeconds === undefined ? {} : { timeSeconds: Math.ceil((found?.usedMs ?? 0) / 1000) }),
        ...(l.amount === undefined ? {} : { amount: found?.consumed ?? 0 }),
      },
    ];
  });
}

/** The grant is what the relay's database serves already: each license, seats and end the same. */
function sameAsServed(grant: PoolGrantClaims, served: ServedProduct[]): boolean {
  if (served.length !== grant.licenses.length) return false;
  return grant.licenses.every((l) =>
    served.some(
      (p) =>
        p.assetNum === l.assetNum &&
        p.crmProductId === l.crmProductId &&
        p.limitConcurrent === l.seats &&
        p.limitEndTime === grant.exp * 1000 &&
        p.limitTimeDuration === (l.timeSeconds ?? null) &&
        p.limitAmount === (l.amount ?? null),
    ),
  );
}

function byAsset<T extends { assetNum: string }>(items: readonly T[]): Array<[string, T[]]> {
  const grouped = new Map<string, T[]>();
  for (const item of items) grouped.set(item.assetNum, [...(grouped.get(item.assetNum) ?? []), item]);
  return [...grouped];
}
