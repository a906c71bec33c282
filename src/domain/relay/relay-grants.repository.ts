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
}

/** Pool grants answered to relays (migration 0186). */
export class RelayGrantsRepository {
  constructor(private readonly db: Db) {}

  async byRequestHash(hash: string): Promise<RelayGrantRow | undefined> {
    const row = await this.db
      .selectFrom('relay_grants')
      .select([
        'id',
        'relay_id',
        'relay_kid',
        'fingerprint',
        'licenses',
        'token',
        'starts_at',
        'ends_at',
        'created_at',
      ])
      .where('request_hash', '=', hash)
      .executeTakeFirst();
    if (row === undefined) return undefined;
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
    };
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
      })
      .onConflict((oc) => oc.column('request_hash').doNothing())
      .returning('id')
      .executeTakeFirst();
    return inserted !== undefined;
  }
}
