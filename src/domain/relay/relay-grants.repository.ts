import type { Db } from '../../db/client.js';
import type { GrantedLicense } from './pool-grant.js';

/** A grant as it was answered. */
export interface RelayGrantRow {
  id: string;
  relayId: string;
  relayKid: string;
  fingerprint: string;
  licenses: GrantedLicense[];
  token: string;
  startsAt: Date;
  endsAt: Date;
  createdAt: Date;
  /** The enterprise whose licenses it gives seats of (null for grants made before migration 0188). */
  enterpriseId: number | null;
  /** When a signed return ended it early; null while it runs to its end. */
  returnedAt: Date | null;
  /** The shares of usage limits it charged to the vendor's licenses (none for most grants). */
  shares: GrantShare[];
}

/** A share of one product instance's usage limits a grant charged: seconds of use, units of amount. */
export interface GrantShare {
  productId: number;
  assetNum: string;
  crmProductId: string;
  timeSeconds: number | null;
  amount: number | null;
}

const COLUMNS = [
  'id',
  'relay_id',
  'relay_kid',
  'fingerprint',
  'licenses',
  'token',
  'starts_at',
  'ends_at',
  'created_at',
  'enterprise_id',
  'returned_at',
  'shares',
] as const;

type GrantRecord = {
  id: string;
  relay_id: string;
  relay_kid: string;
  fingerprint: string;
  licenses: unknown;
  token: string;
  starts_at: Date;
  ends_at: Date;
  created_at: Date;
  enterprise_id: number | string | null;
  returned_at: Date | null;
  shares: unknown;
};

function rowOf(row: GrantRecord): RelayGrantRow {
  return {
    id: row.id,
    relayId: row.relay_id,
    relayKid: row.relay_kid,
    fingerprint: row.fingerprint,
    licenses: row.licenses as GrantedLicense[],
    token: row.token,
    startsAt: row.starts_at,
    endsAt: row.ends_at,
    createdAt: row.created_at,
    enterpriseId: row.enterprise_id === null ? null : Number(row.enterprise_id),
    returnedAt: row.returned_at,
    shares: (row.shares ?? []) as GrantShare[],
  };
}

/** Pool grants answered to relays (migration 0186). */
export class RelayGrantsRepository {
  constructor(private readonly db: Db) {}

  async byRequestHash(hash: string): Promise<RelayGrantRow | undefined> {
    const row = await this.db
      .selectFrom('relay_grants')
      .select(COLUMNS)
      .where('request_hash', '=', hash)
      .executeTakeFirst();
    return row === undefined ? undefined : rowOf(row);
  }

  async byId(id: string): Promise<RelayGrantRow | undefined> {
    const row = await this.db
      .selectFrom('relay_grants')
      .select(COLUMNS)
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : rowOf(row);
  }

  /** A relay's grants, newest first. */
  async ofRelay(relayId: string): Promise<RelayGrantRow[]> {
    const rows = await this.db
      .selectFrom('relay_grants')
      .select(COLUMNS)
      .where('relay_id', '=', relayId)
      .orderBy('created_at', 'desc')
      .limit(100)
      .execute();
    return rows.map(rowOf);
  }

  /** The newest grants, of one enterprise's licenses when given. */
  async recent(filter: { enterpriseId?: number; limit: number }): Promise<RelayGrantRow[]> {
    let query = this.db.selectFrom('relay_grants').select(COLUMNS);
    if (filter.enterpriseId !== undefined) query = query.where('enterprise_id', '=', filter.enterpriseId);
    const rows = await query.orderBy('created_at', 'desc').limit(filter.limit).execute();
    return rows.map(rowOf);
  }

  /** Ends a grant early (a signed return); false when it was returned already. */
  async markReturned(id: string, at: Date): Promise<boolean> {
    const updated = await this.db
      .updateTable('relay_grants')
      .set({ returned_at: at })
      .where('id', '=', id)
      .where('returned_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return updated !== undefined;
  }

  /** Records a grant; false when the same request was answered meanwhile (its hash is taken). */
  async insert(grant: RelayGrantRow, requestHash: string): Promise<boolean> {
    const inserted = await this.db
      .insertInto('relay_grants')
      .values({
        id: grant.id,
        request_hash: requestHash,
        relay_id: grant.relayId,
        relay_kid: grant.relayKid,
        fingerprint: grant.fingerprint,
        licenses: JSON.stringify(grant.licenses),
        token: grant.token,
        starts_at: grant.startsAt,
        ends_at: grant.endsAt,
        created_at: grant.createdAt,
        enterprise_id: grant.enterpriseId,
        shares: grant.shares.length === 0 ? null : JSON.stringify(grant.shares),
      })
      .onConflict((oc) => oc.column('request_hash').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }
}
