import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { preparedQuery, type Slots } from '../../db/prepared-statements.js';
import {
  toTokenGrant,
  toUserGrant,
  TokensRepository,
  type TokenGrant,
  type UserTokenGrant,
} from '../tokens/tokens.repository.js';

/**
 * The gate's writes commit without waiting for the WAL flush (ADR 0010): visible to every instance
 * at once like any commit, but a database crash may forget the last fraction of a second of them.
 * A call that writes anything commits synchronously later, which flushes its nonce with it.
 */
const ASYNC_COMMIT = sql`select set_config('synchronous_commit', 'off', true)`;

/** One call as the gate sees it: hashes of its tokens, the scope its surface needs, its nonce. */
export interface GateVisit {
  appTokenHash: string;
  userTokenHash: string | null;
  scope: string;
  /** Null: nothing to record (a call whose replay is harmless). */
  nonce: string | null;
}

export interface GateRecord {
  app: TokenGrant | undefined;
  user: UserTokenGrant | undefined;
  /** Whether the app token is live and holds the scope: only then is anything recorded. */
  admitted: boolean;
  /** The app's calls in this window up to and including this one. */
  hits: number;
  /** The nonce was new and is now recorded for this call (not for another call in the batch). */
  fresh: boolean;
}

const CHECK_SLOTS = [
  'ords',
  'appHashes',
  'userHashes',
  'scopes',
  'nonces',
  'expiresAt',
  'window',
  'shard',
] as const;
type CheckSlot = (typeof CHECK_SLOTS)[number];

interface GateRow {
  nonce: string | null;
  app_id: string | null;
  app_key: string | null;
  scopes: string[] | null;
  channels: string[] | null;
  kind: 'app' | 'user' | null;
  member_id: number | null;
  rate_limit_per_minute: number | null;
  admitted: boolean;
  fresh: boolean;
  total_hits: number | null;
  batch_hits: number | null;
  user_app_id: string | null;
  user_member_id: number | null;
  member_global_id: string | null;
  account: string | null;
  identity: 'admin' | 'member' | null;
  enterprise_id: number | null;
  enterprise_global_id: string | null;
}

function grantOf(row: GateRow): TokenGrant | undefined {
  const { app_id, app_key, scopes, channels, kind } = row;
  if (app_id === null || app_key === null || scopes === null || channels === null || kind === null) return;
  return toTokenGrant({
    app_id,
    app_key,
    scopes,
    channels,
    kind,
    member_id: row.member_id,
    rate_limit_per_minute: row.rate_limit_per_minute,
  });
}

function userOf(row: GateRow): UserTokenGrant | undefined {
  const { user_app_id, user_member_id, member_global_id, account, identity } = row;
  const { enterprise_id, enterprise_global_id } = row;
  if (
    user_app_id === null ||
    user_member_id === null ||
    member_global_id === null ||
    account === null ||
    identity === null ||
    enterprise_id === null ||
    enterprise_global_id === null
  ) {
    return undefined;
  }
  return toUserGrant({
    app_id: user_app_id,
    member_id: user_member_id,
    member_global_id,
    account,
    identity,
    enterprise_id,
    enterprise_global_id,
  });
}

/**
 * Per call of a batch: a nonce given twice in one batch is fresh only for the first call, and the
 * k-th admitted call of an app counts as the k-th of the calls the batch added to its counter.
 */
function toRecords(rows: GateRow[]): GateRecord[] {
  const claimed = new Set<string>();
  const seen = new Map<string, number>();
  return rows.map((row) => {
    const app = grantOf(row);
    const key = `${row.app_id ?? ''}\u0000${row.nonce}`;
    const fresh = row.admitted && (row.nonce === null || (row.fresh && !claimed.has(key)));
    if (fresh && row.nonce !== null) claimed.add(key);
    let hits = 0;
    if (row.admitted && row.app_id !== null) {
      const k = (seen.get(row.app_id) ?? 0) + 1;
      seen.set(row.app_id, k);
      hits = Number(row.total_hits ?? 0) - Number(row.batch_hits ?? 0) + k;
    }
    return { app, user: userOf(row), admitted: row.admitted, hits, fresh };
  });
}

/**
 * The recording half of the gate, after a CTE `admitted` (app_id, nonce) of the admitted calls:
 * their new nonces (`fresh`), their number per app (`counts`) added to one shard of the app's
 * counter (`rate`), and the app's other shards in this window (`others`). The values are a
 * prepared statement's slots or a call's own values.
 */
function recording(values: { expiresAt: unknown; window: unknown; shard: unknown }) {
  const { expiresAt, window, shard } = values;
  return sql`
      fresh as (
        insert into nonces (app_id, nonce, expires_at)
        select distinct app_id, nonce, ${expiresAt}::timestamptz from admitted where nonce is not null
        on conflict do nothing
        returning app_id, nonce
      ),
      counts as (select app_id, count(*)::int as n from admitted group by app_id),
      rate as (
        insert into rate_counters (app_id, window_start, shard, hits)
        select app_id, ${window}::bigint, ${shard}::smallint, n from counts
        on conflict (app_id, window_start, shard) do update set hits = rate_counters.hits + excluded.hits
        returning app_id, hits
      ),
      others as (
        select r.app_id, sum(r.hits)::int as hits
          from rate_counters r join counts c on c.app_id = r.app_id
         where r.window_start = ${window}::bigint and r.shard <> ${shard}::smallint
         group by r.app_id
      )`;
}

/**
 * The guards' statement for a batch of calls (see DbGateRepository.check): its slots are the
 * batch's columns and the counter's window and shard.
 */
const checkStatement = preparedQuery<GateRow, CheckSlot>(CHECK_SLOTS, (db, v: Slots<CheckSlot>) => {
  const tokens = new TokensRepository(db);
  const app = tokens.liveTokenQuery(sql.ref<string>('r.app_hash')).where('t.kind', '=', 'app');
  const user = tokens.liveUserQuery(sql.ref<string>('r.user_hash'));
  return sql<GateRow>`
      with req as (
        select * from unnest(${v.ords}::int[], ${v.appHashes}::text[], ${v.userHashes}::text[],
                             ${v.scopes}::text[], ${v.nonces}::text[])
                   as r(ord, app_hash, user_hash, scope, nonce)
      ),
      looked as (
        select r.ord, r.nonce, app.app_id, app.app_key, app.scopes, app.channels, app.kind, app.member_id,
               app.rate_limit_per_minute,
               coalesce(r.scope = any(app.scopes), false) as admitted,
               u.app_id as user_app_id, u.member_id as user_member_id, u.member_global_id, u.account,
               u.identity, u.enterprise_id, u.enterprise_global_id
          from req r
          left join lateral (${app}) as app on true
          left join lateral (${user}) as u on true
      ),
      admitted as (select ord, app_id, nonce from looked where admitted),
      ${recording({ expiresAt: v.expiresAt, window: v.window, shard: v.shard })}
      select l.*, f.app_id is not null as fresh, rate.hits + coalesce(o.hits, 0) as total_hits, c.n as batch_hits
        from looked l
        cross join (${ASYNC_COMMIT}) as durability
        left join fresh f on f.app_id = l.app_id and f.nonce = l.nonce
        left join counts c on c.app_id = l.app_id
        left join rate on rate.app_id = l.app_id
        left join others o on o.app_id = l.app_id
       order by l.ord
    `;
});

export class DbGateRepository {
  constructor(private readonly db: Db) {}

  /**
   * One statement for the guards of many calls: each call's app token (and user token, when given)
   * looked up as TokensRepository defines them, and — only for calls whose app token is live and
   * holds the scope — the nonces recorded and the calls counted on one shard of each app's counter.
   * Revocation stays immediate: nothing is cached between statements.
   */
  async check(
    visits: GateVisit[],
    counter: { window: number; shard: number },
    expiresAt: Date,
  ): Promise<GateRecord[]> {
    if (visits.length === 0) return [];
    const column = <K extends keyof GateVisit>(key: K) => visits.map((v) => v[key]);
    const rows = await checkStatement(this.db, {
      ords: visits.map((_, i) => i),
      appHashes: column('appTokenHash'),
      userHashes: column('userTokenHash'),
      scopes: column('scope'),
      nonces: column('nonce'),
      expiresAt,
      window: counter.window,
      shard: counter.shard,
    });
    return toRecords(rows);
  }

  /**
   * The same answer as check in three short statements: the app tokens, the user tokens, then the
   * nonces and counts of the admitted calls. For the embedded database, which plans every statement
   * anew: there a few simple statements cost less than one elaborate one.
   */
  async checkInSteps(
    visits: GateVisit[],
    counter: { window: number; shard: number },
    expiresAt: Date,
  ): Promise<GateRecord[]> {
    if (visits.length === 0) return [];
    const tokens = new TokensRepository(this.db);
    const hashes = (list: Array<string | null>) => sql<string>`any(${[...new Set(list)]}::text[])`;
    const apps = new Map(
      (
        await tokens
          .liveTokenQuery(hashes(visits.map((v) => v.appTokenHash)))
          .where('t.kind', '=', 'app')
          .select('t.token_hash')
          .execute()
      ).map((row) => [row.token_hash, row] as const),
    );
    const userHashes = visits.flatMap((v) => (v.userTokenHash === null ? [] : [v.userTokenHash]));
    const users = new Map(
      userHashes.length === 0
        ? []
        : (await tokens.liveUserQuery(hashes(userHashes)).select('t.token_hash').execute()).map(
            (row) => [row.token_hash, row] as const,
          ),
    );
    const looked = visits.map((visit) => {
      const app = apps.get(visit.appTokenHash);
      const user = visit.userTokenHash === null ? undefined : users.get(visit.userTokenHash);
      return { visit, app, user, admitted: app?.scopes.includes(visit.scope) === true };
    });
    const admitted = looked.flatMap(({ visit, app, admitted: ok }) =>
      ok && app ? [{ appId: app.app_id, nonce: visit.nonce }] : [],
    );
    const counts = admitted.length === 0 ? [] : await this.recordAdmitted(admitted, counter, expiresAt);
    const countOf = new Map(counts.map((c) => [`${c.app_id}\u0000${c.nonce}`, c] as const));
    return toRecords(
      looked.map(({ visit, app, user, admitted: ok }) => {
        const count = app ? countOf.get(`${app.app_id}\u0000${visit.nonce}`) : undefined;
        return {
          nonce: visit.nonce,
          app_id: app?.app_id ?? null,
          app_key: app?.app_key ?? null,
          scopes: app?.scopes ?? null,
          channels: app?.channels ?? null,
          kind: app?.kind ?? null,
          member_id: app?.member_id ?? null,
          rate_limit_per_minute: app?.rate_limit_per_minute ?? null,
          admitted: ok,
          fresh: count?.fresh ?? false,
          total_hits: count?.total_hits ?? null,
          batch_hits: count?.batch_hits ?? null,
          user_app_id: user?.app_id ?? null,
          user_member_id: user?.member_id ?? null,
          member_global_id: user?.member_global_id ?? null,
          account: user?.account ?? null,
          identity: user?.identity ?? null,
          enterprise_id: user?.enterprise_id ?? null,
          enterprise_global_id: user?.enterprise_global_id ?? null,
        };
      }),
    );
  }

  /**
   * checkInSteps' last statement, and DbGate.admit's only one: the nonces recorded and the calls
   * counted, as check does.
   */
  async recordAdmitted(
    admitted: Array<{ appId: string; nonce: string | null }>,
    counter: { window: number; shard: number },
    expiresAt: Date,
  ) {
    const result = await sql<{
      app_id: string;
      nonce: string | null;
      fresh: boolean;
      total_hits: number;
      batch_hits: number;
    }>`
      with admitted as (
        select * from unnest(${admitted.map((a) => a.appId)}::text[], ${admitted.map((a) => a.nonce)}::text[])
                   as a(app_id, nonce)
      ),
      ${recording({ expiresAt, ...counter })}
      select distinct a.app_id, a.nonce, f.app_id is not null as fresh,
             rate.hits + coalesce(o.hits, 0) as total_hits, c.n as batch_hits
        from admitted a
        cross join (${ASYNC_COMMIT}) as durability
        left join fresh f on f.app_id = a.app_id and f.nonce = a.nonce
        join counts c on c.app_id = a.app_id
        join rate on rate.app_id = a.app_id
        left join others o on o.app_id = a.app_id
    `.execute(this.db);
    return result.rows;
  }

  /**
   * One request counted against each key on one shard of its counter (keys share the apps'
   * counter table: they are prefixed so that none is an app id); answers each key's total in
   * the window.
   */
  async countKeys(keys: string[], counter: { window: number; shard: number }): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const result = await sql<{ key: string; total: number }>`
      with keys as (select distinct unnest(${keys}::text[]) as key),
      rate as (
        insert into rate_counters (app_id, window_start, shard, hits)
        select key, ${counter.window}::bigint, ${counter.shard}::smallint, 1 from keys
        on conflict (app_id, window_start, shard) do update set hits = rate_counters.hits + 1
        returning app_id, hits
      ),
      others as (
        select r.app_id, sum(r.hits)::int as hits
          from rate_counters r join keys k on k.key = r.app_id
         where r.window_start = ${counter.window}::bigint and r.shard <> ${counter.shard}::smallint
         group by r.app_id
      )
      select rate.app_id as key, rate.hits + coalesce(o.hits, 0) as total
        from rate
        cross join (${ASYNC_COMMIT}) as durability
        left join others o on o.app_id = rate.app_id
    `.execute(this.db);
    return new Map(result.rows.map((r) => [r.key, Number(r.total)]));
  }

  async peekKeys(keys: string[], window: number): Promise<Map<string, number>> {
    if (keys.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('rate_counters')
      .select(['app_id as key', sql<number>`sum(hits)::int`.as('total')])
      .where('app_id', 'in', keys)
      .where('window_start', '=', window)
      .groupBy('app_id')
      .execute();
    return new Map(rows.map((r) => [r.key, Number(r.total)]));
  }

  async purge(oldestWindow: number): Promise<void> {
    await this.db
      .deleteFrom('nonces')
      .where('expires_at', '<', sql<Date>`now()`)
      .execute();
    await this.db.deleteFrom('rate_counters').where('window_start', '<', oldestWindow).execute();
  }
}
