import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/client.js';
import { AppsService } from '../../src/domain/apps/apps.service.js';
import { DbGate } from '../../src/domain/gate/db-gate.js';
import type { CallCheck, RequestGate } from '../../src/domain/gate/gate.js';
import { RedisGate } from '../../src/domain/gate/redis-gate.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { TokensService } from '../../src/domain/tokens/tokens.service.js';
import { openTestDatabase } from '../support/database.js';
import { awayFromMinuteEnd, nonce, uniqueCode } from '../support/harness.js';

// The guards' one question per call (RequestGate.check): tokens, nonce and rate limit together,
// on the database gate (calls batched into shared statements) and on the Redis gate.

let database: DatabaseHandle;
let tokens: TokensService;

beforeAll(async () => {
  database = await openTestDatabase();
  tokens = new TokensService(database.db, 3600);
});
afterAll(async () => database.close());

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const useRedis = process.env.KEYWARD_REQUIRE_REDIS === '1';

/** A fresh app with the given scopes, an app token, and a member of a fresh enterprise with a user token. */
async function world(scopes: Array<'auth_order' | 'auth_me'> = ['auth_order', 'auth_me']) {
  const created = await new AppsService(database.db).create({
    name: 'gate test',
    scopes,
    channels: [uniqueCode('CH')],
    pending: false,
  });
  const app = await database.db
    .selectFrom('apps')
    .select(['id', 'secret_hash as secretHash'])
    .where('app_key', '=', created.appKey)
    .executeTakeFirstOrThrow();
  const enterprise = await database.db
    .insertInto('enterprises')
    .values({ global_id: newGlobalId(), name: 'Gate Co', code: uniqueCode('g').slice(0, 6) })
    .returning(['id', 'global_id'])
    .executeTakeFirstOrThrow();
  const member = await database.db
    .insertInto('members')
    .values({
      global_id: newGlobalId(),
      enterprise_id: enterprise.id,
      user_name: 'admin',
      account: `admin@${uniqueCode('a')}`,
      identity: 'admin',
      deleted: false,
    })
    .returning(['id', 'global_id'])
    .executeTakeFirstOrThrow();
  const issue = async (scopes: string[], memberId: number | null) => {
    const token = await tokens.issue({ app, scopes, memberId });
    if (!token) throw new Error('no token issued');
    return token.access_token;
  };
  const appToken = await issue(scopes, null);
  const userToken = await issue(scopes, member.id);
  return { issue, appId: app.id, appKey: created.appKey, appToken, userToken, member, enterprise };
}

function checkSuite(name: string, make: (limit: number) => RequestGate, enabled = true): void {
  describe.runIf(enabled)(name, () => {
    it('answers the app and the user behind live tokens, and admits a nonce once', async () => {
      const gate = make(1000);
      const w = await world();
      const call: CallCheck = {
        appToken: w.appToken,
        scope: 'auth_me',
        nonce: nonce(),
        userToken: w.userToken,
      };
      const first = await gate.check(call);
      expect(first.app).toMatchObject({ appId: w.appId, appKey: w.appKey, kind: 'app' });
      expect(first.user).toMatchObject({
        appId: w.appId,
        memberId: w.member.id,
        memberGlobalId: w.member.global_id,
        identity: 'admin',
        enterpriseId: w.enterprise.id,
        enterpriseGlobalId: w.enterprise.global_id,
      });
      expect(first.admission).toBe('ok');
      expect((await gate.check(call)).admission).toBe('replayed');
      await gate.close();
    });

    it('records nothing for a dead or unscoped app token, so its nonce stays usable', async () => {
      const gate = make(1000);
      const w = await world(['auth_order']);
      const n = nonce();
      const unknown = await gate.check({ appToken: 'not-a-token', scope: 'auth_order', nonce: n });
      expect(unknown).toEqual({ app: undefined, admission: undefined, user: undefined });
      const unscoped = await gate.check({ appToken: w.appToken, scope: 'auth_me', nonce: n });
      expect(unscoped.app?.appId).toBe(w.appId);
      expect(unscoped.admission).toBeUndefined();
      // A user token is not an app token.
      const userAsApp = await gate.check({ appToken: w.userToken, scope: 'auth_order', nonce: n });
      expect(userAsApp.app).toBeUndefined();
      expect((await gate.check({ appToken: w.appToken, scope: 'auth_order', nonce: n })).admission).toBe(
        'ok',
      );
      await gate.close();
    });

    it('admits a token only for the scopes it was issued with and its app still holds', async () => {
      const gate = make(1000);
      const w = await world();
      const orderOnly = await w.issue(['auth_order'], null);
      const meOnly = await w.issue(['auth_me'], null);
      const check = (appToken: string, scope: CallCheck['scope']) =>
        gate.check({ appToken, scope, nonce: nonce() });
      const refused = await check(orderOnly, 'auth_me');
      expect(refused.app?.scopes).toEqual(['auth_order']);
      expect(refused.admission).toBeUndefined();
      expect((await check(meOnly, 'auth_order')).admission).toBeUndefined();
      expect((await check(orderOnly, 'auth_order')).admission).toBe('ok');
      expect((await check(meOnly, 'auth_me')).admission).toBe('ok');
      // A scope taken from the app is gone from the tokens it issued before.
      await database.db
        .updateTable('apps')
        .set({ scopes: ['auth_me'] })
        .where('id', '=', w.appId)
        .execute();
      const narrowed = await check(w.appToken, 'auth_order');
      expect(narrowed.app?.scopes).toEqual(['auth_me']);
      expect(narrowed.admission).toBeUndefined();
      expect((await check(w.appToken, 'auth_me')).admission).toBe('ok');
      await gate.close();
    });

    it('stops answering a token the moment it is revoked', async () => {
      const gate = make(1000);
      const w = await world();
      await tokens.revokeForMember(w.member.id);
      const facts = await gate.check({
        appToken: w.appToken,
        scope: 'auth_me',
        nonce: nonce(),
        userToken: w.userToken,
      });
      expect(facts.app?.appId).toBe(w.appId);
      expect(facts.user).toBeUndefined();
      await gate.close();
    });

    it('admits exactly one of many concurrent calls with one nonce, even within one statement', async () => {
      const gate = make(1000);
      const w = await world();
      const call: CallCheck = { appToken: w.appToken, scope: 'auth_order', nonce: nonce() };
      const outcomes = await Promise.all(Array.from({ length: 30 }, () => gate.check(call)));
      expect(outcomes.filter((o) => o.admission === 'ok')).toHaveLength(1);
      expect(outcomes.filter((o) => o.admission === 'replayed')).toHaveLength(29);
      await gate.close();
    });

    it('counts calls against the per-minute limit one by one', async () => {
      await awayFromMinuteEnd();
      const gate = make(5);
      const w = await world();
      const outcomes = [];
      for (let i = 0; i < 7; i += 1) {
        outcomes.push(
          (await gate.check({ appToken: w.appToken, scope: 'auth_order', nonce: nonce() })).admission,
        );
      }
      expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'limited', 'limited']);
      await gate.close();
    });

    it('admits no fewer than the limit of concurrent calls, and none once it is reached', async () => {
      await awayFromMinuteEnd();
      const gate = make(5);
      const w = await world();
      const outcomes = await Promise.all(
        Array.from({ length: 12 }, () =>
          gate.check({ appToken: w.appToken, scope: 'auth_order', nonce: nonce() }),
        ),
      );
      expect(outcomes.filter((o) => o.admission === 'ok').length).toBeGreaterThanOrEqual(5);
      expect(outcomes.filter((o) => o.admission === 'limited').length).toBeGreaterThan(0);
      expect(outcomes.every((o) => o.admission === 'ok' || o.admission === 'limited')).toBe(true);
      const after = await gate.check({ appToken: w.appToken, scope: 'auth_order', nonce: nonce() });
      expect(after.admission).toBe('limited');
      await gate.close();
    });
  });
}

checkSuite(
  'database gate',
  (limit) => new DbGate(database.db, { nonceTtlSeconds: 60, limitPerMinute: limit }),
);
checkSuite(
  'redis gate',
  (limit) => new RedisGate(REDIS_URL, { nonceTtlSeconds: 60, limitPerMinute: limit }, database.db),
  useRedis,
);

describe('database gate across instances', () => {
  it('refuses on one instance a nonce another instance admitted a moment before', async () => {
    const settings = { nonceTtlSeconds: 60, limitPerMinute: 1000 };
    const first = new DbGate(database.db, settings);
    const second = new DbGate(database.db, settings);
    const w = await world();
    const call: CallCheck = { appToken: w.appToken, scope: 'auth_order', nonce: nonce() };
    expect((await first.check(call)).admission).toBe('ok');
    expect((await second.check(call)).admission).toBe('replayed');
  });

  it('keeps its commits from changing the durability of later statements on the connection', async () => {
    const gate = new DbGate(database.db, { nonceTtlSeconds: 60, limitPerMinute: 1000 });
    const w = await world();
    await gate.check({ appToken: w.appToken, scope: 'auth_order', nonce: nonce() });
    // One connection (embedded) or one of the pool's: none is left with asynchronous commits.
    const settings = await Promise.all(
      Array.from({ length: 12 }, async () =>
        database.db.transaction().execute(async (trx) => {
          const { rows } = await sql<{ synchronous_commit: string }>`show synchronous_commit`.execute(trx);
          return rows[0]?.synchronous_commit;
        }),
      ),
    );
    expect(new Set(settings)).toEqual(new Set(['on']));
  });
});
