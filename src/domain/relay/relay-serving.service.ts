import type { RuntimeService } from '../runtime/runtime.service.js';
import { termsSummaryOf } from './grant-terms.js';
import type { PoolGrantClaims } from './pool-grant.js';
import type { GrantShareView } from './relay-grant.service.js';
import type { RelayLicensesService } from './relay-licenses.service.js';

/** What `/relay` shows: the grant served, and each license's seats granted and in use now. */
export interface RelayServingStatus {
  relayId: string;
  grantId: string;
  /** Milliseconds since the epoch. */
  endsAt: number;
  ended: boolean;
  licenses: Array<{
    assetNum: string;
    crmProductId: string | null;
    granted: number;
    inUse: number;
    /** The grant's shares of the license's usage limits and the relay's use of them; null: none. */
    share: GrantShareView | null;
  }>;
  /** Machines holding a seat: each holds one seat of one product. */
  seatsInUse: number;
  /** The grant's terms: machines listed (null: any machine) and overage seats per product. */
  machines: number | null;
  overage: number;
}

/** The relay's serving state, read from its database as its runtime counts seats. */
export class RelayServingService {
  constructor(
    private readonly grant: PoolGrantClaims,
    private readonly deps: { runtime: RuntimeService; licenses: RelayLicensesService; now?: () => number },
  ) {}

  async status(): Promise<RelayServingStatus> {
    const now = (this.deps.now ?? Date.now)();
    const [served, seats, used] = await Promise.all([
      this.deps.licenses.served(),
      this.deps.runtime.seatsByProduct(),
      this.deps.licenses.usedShares(this.grant, now),
    ]);
    const inUse = new Map(seats.map((s) => [s.product, s.seats]));
    const licenses = served.map((p) => {
      const said = used.find((u) => u.assetNum === p.assetNum && u.crmProductId === (p.crmProductId ?? ''));
      return {
        assetNum: p.assetNum,
        crmProductId: p.crmProductId,
        granted: p.limitConcurrent ?? 0,
        inUse: inUse.get(p.crmProductId ?? '') ?? 0,
        share:
          p.limitTimeDuration === null && p.limitAmount === null
            ? null
            : {
                assetNum: p.assetNum,
                crmProductId: p.crmProductId ?? '',
                timeSeconds: p.limitTimeDuration,
                amount: p.limitAmount,
                used: { timeSeconds: said?.timeSeconds ?? null, amount: said?.amount ?? null },
              },
      };
    });
    return {
      relayId: this.grant.sub,
      grantId: this.grant.jti,
      endsAt: this.grant.exp * 1000,
      ended: this.grant.exp * 1000 <= now,
      licenses,
      seatsInUse: licenses.reduce((sum, l) => sum + l.inUse, 0),
      ...termsSummaryOf(this.grant),
    };
  }
}
