import { sql, type Expression } from 'kysely';
import type { Db } from '../../db/client.js';
import { servesEnterprise } from '../apps/apps.repository.js';

export interface TokenGrant {
  appId: string;
  appKey: string;
  /**
   * The scopes the token was issued with that its app still holds: a token asked for one scope
   * opens only that surface, and a scope taken from the app is gone from its tokens at once.
   */
  scopes: string[];
  channels: string[];
  kind: 'app' | 'user';
  memberId: number | null;
  /** The app's own calls a minute (`keyward app set --rate-limit`); null: the server's default. */
  rateLimitPerMinute: number | null;
}

export interface UserTokenGrant {
  appId: string;
  memberId: number;
  memberGlobalId: string;
  account: string;
  identity: 'admin' | 'member';
  enterpriseId: number;
  enterpriseGlobalId: string;
}

export function toTokenGrant(row: {
  app_id: string;
  app_key: string;
  scopes: string[];
  channels: string[];
  kind: 'app' | 'user';
  member_id: number | null;
  rate_limit_per_minute?: number | null;
}): TokenGrant {
  return {
    appId: row.app_id,
    appKey: row.app_key,
    scopes: row.scopes,
    channels: row.channels,
    kind: row.kind,
    memberId: row.member_id,
    rateLimitPerMinute: row.rate_limit_per_minute ?? null,
  };
}

export function toUserGrant(row: {
  app_id: string;
  member_id: number;
  member_global_id: string;
  account: string;
  identity: 'admin' | 'member';
  enterprise_id: number;
  enterprise_global_id: string;
}): UserTokenGrant {
  return {
    appId: row.app_id,
    memberId: row.member_id,
    memberGlobalId: row.member_global_id,
    account: row.account,
    identity: row.identity,
    enterpriseId: row.enterprise_id,
    enterpriseGlobalId: row.enterprise_global_id,
  };
}

export class TokensRepository {
  constructor(private readonly db: Db) {}

  /**
   * Stores a token only while its app is active and still has the secret the client authenticated
   * with. The app row is share-locked, so a rotation that revokes tokens either waits for this
   * token and revokes it too, or has committed and nothing is stored: no token of an old secret
   * outlives `rotate-secret --revoke-tokens` however the two interleave. A user token is stored
   * only for a member of an enterprise the app serves (servesEnterprise). False when nothing was
   * stored.
   */
  async insert(token: {
    tokenHash: string;
    appId: string;
    secretHash: string;
    memberId: number | null;
    kind: 'app' | 'user';
    scopes: string[];
    expiresAt: Date;
  }): Promise<boolean> {
    const enterprise = sql<number>`(select m.enterprise_id from members m where m.id = ${token.memberId})`;
    const row = await this.db
      .insertInto('tokens')
      .columns(['token_hash', 'app_id', 'member_id', 'kind', 'scopes', 'expires_at'])
      .expression(
        this.db
          .selectFrom('apps')
          .select([
            sql<string>`${token.tokenHash}::text`.as('token_hash'),
            'id',
            sql<number | null>`${token.memberId}::bigint`.as('member_id'),
            sql<string>`${token.kind}::text`.as('kind'),
            sql<string[]>`${token.scopes}::text[]`.as('scopes'),
            sql<Date>`${token.expiresAt}::timestamptz`.as('expires_at'),
          ])
          .where('id', '=', token.appId)
          .where('secret_hash', '=', token.secretHash)
          .where('status', '=', 'active')
          .where(token.memberId === null ? sql<boolean>`true` : servesEnterprise('apps', enterprise))
          .forShare(),
      )
      .returning('token_hash')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * The live token of an active app with this hash, as a query: the gate runs it inside its own
   * statement (DbGateRepository), so the tokens and nonces of many calls take one round trip.
   * Its `scopes` are the token's own, less any its app has lost since (see TokenGrant).
   */
  liveTokenQuery(tokenHash: string | Expression<string>) {
    return this.db
      .selectFrom('tokens as t')
      .innerJoin('apps as a', 'a.id', 't.app_id')
      .select(['t.app_id', 'a.app_key', 'a.channels', 't.kind', 't.member_id', 'a.rate_limit_per_minute'])
      .select(
        sql<string[]>`array(select s.scope from unnest(t.scopes) with ordinality as s(scope, n)
                             where s.scope = any(a.scopes) order by s.n)`.as('scopes'),
      )
      .where('t.token_hash', '=', tokenHash)
      .where('t.revoked_at', 'is', null)
      .where('t.expires_at', '>', sql<Date>`now()`)
      .where('a.status', '=', 'active');
  }

  /**
   * A live user token whose member still exists, of an enterprise its app serves (an app restricted
   * to its channels since the token was issued refuses it from its next call), as a query (see
   * liveTokenQuery).
   */
  liveUserQuery(tokenHash: string | Expression<string>) {
    return this.db
      .selectFrom('tokens as t')
      .innerJoin('apps as a', 'a.id', 't.app_id')
      .innerJoin('members as m', 'm.id', 't.member_id')
      .innerJoin('enterprises as e', 'e.id', 'm.enterprise_id')
      .select([
        't.app_id',
        'm.id as member_id',
        'm.global_id as member_global_id',
        'm.account',
        'm.identity',
        'e.id as enterprise_id',
        'e.global_id as enterprise_global_id',
      ])
      .where('t.token_hash', '=', tokenHash)
      .where('t.kind', '=', 'user')
      .where('t.revoked_at', 'is', null)
      .where('t.expires_at', '>', sql<Date>`now()`)
      .where('a.status', '=', 'active')
      .where('m.deleted', '=', false)
      .where(servesEnterprise('a', sql.ref<number>('m.enterprise_id')));
  }

  /** A live token of an active app, or nothing: expired, revoked and disabled look the same. */
  async findLive(tokenHash: string): Promise<TokenGrant | undefined> {
    const row = await this.liveTokenQuery(tokenHash).executeTakeFirst();
    return row && toTokenGrant(row);
  }

  /** A live user token whose member still exists. */
  async findLiveUser(tokenHash: string): Promise<UserTokenGrant | undefined> {
    const row = await this.liveUserQuery(tokenHash).executeTakeFirst();
    return row && toUserGrant(row);
  }

  async revokeForApp(appId: string): Promise<void> {
    await this.db
      .updateTable('tokens')
      .set({ revoked_at: new Date() })
      .where('app_id', '=', appId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async revoke(tokenHash: string): Promise<void> {
    await this.db
      .updateTable('tokens')
      .set({ revoked_at: new Date() })
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async revokeForMember(memberId: number): Promise<void> {
    await this.db
      .updateTable('tokens')
      .set({ revoked_at: new Date() })
      .where('member_id', '=', memberId)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async purgeExpired(): Promise<void> {
    await this.db
      .deleteFrom('tokens')
      .where('expires_at', '<', sql<Date>`now()`)
      .execute();
  }
}
