import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DbGate } from '../../src/domain/gate/db-gate.js';
import { RedisGate } from '../../src/domain/gate/redis-gate.js';
import type { RequestGate } from '../../src/domain/gate/gate.js';
import type { DatabaseHandle } from '../../src/db/client.js';
import { openTestDatabase } from '../support/database.js';
import { nonce, uniqueCode } from '../support/harness.js';
import { REDIS_URL, redisAvailable } from '../support/redis.js';

let database: DatabaseHandle;
beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(async () => database.close());

const hasRedis = await redisAvailable();

function gateSuite(name: string, make: (limit: number) => RequestGate, enabled = true): void {
  describe.runIf(enabled)(name, () => {
    it('admits a nonce once per app, and the same nonce for another app', async () => {
      const gate = make(1000);
      const appA = uniqueCode('app');
      const appB = uniqueCode('app');
      const n = nonce();
      expect(await gate.admit(appA, n)).toBe('ok');
      expect(await gate.admit(appA, n)).toBe('replayed');
      expect(await gate.admit(appB, n)).toBe('ok');
      await gate.close();
    });

    it('admits exactly one of many concurrent uses of a nonce', async () => {
      const gate = make(1000);
      const app = uniqueCode('app');
      const n = nonce();
      const outcomes = await Promise.all(Array.from({ length: 20 }, () => gate.admit(app, n)));
      expect(outcomes.filter((o) => o === 'ok')).toHaveLength(1);
      await gate.close();
    });

    it('limits an app to its calls per minute', async () => {
      const gate = make(3);
      const app = uniqueCode('app');
      const outcomes = [];
      for (let i = 0; i < 5; i += 1) outcomes.push(await gate.admit(app, nonce()));
      expect(outcomes).toEqual(['ok', 'ok', 'ok', 'limited', 'limited']);
      expect(await gate.admit(uniqueCode('app'), nonce())).toBe('ok');
      await gate.close();
    });

    it('counts requests per key, each key on its own, across gates on one store', async () => {
      const one = make(1000);
      const two = make(1000);
      const a = `test:${uniqueCode('k')}`;
      const b = `test:${uniqueCode('k')}`;
      // Counts are per minute: start with the minute's end well ahead.
      const left = 60_000 - (Date.now() % 60_000);
      if (left < 10_000) await new Promise((resolve) => setTimeout(resolve, left + 100));
      expect(await one.countRequests([a, b])).toEqual([1, 1]);
      expect(await two.countRequests([a])).toEqual([2]);
      await Promise.all([one.countRequests([b, a]), two.countRequests([b])]);
      expect(await one.countRequests([a, b])).toEqual([4, 4]);
      await one.close();
      await two.close();
    });
  });
}

gateSuite(
  'database gate',
  (limit) => new DbGate(database.db, { nonceTtlSeconds: 60, limitPerMinute: limit }),
);
gateSuite(
  'redis gate',
  (limit) => new RedisGate(REDIS_URL, { nonceTtlSeconds: 60, limitPerMinute: limit }, database.db),
  hasRedis,
);

describe('database gate purge', () => {
  it('removes expired nonces so the table does not grow forever', async () => {
    const gate = new DbGate(database.db, { nonceTtlSeconds: 60, limitPerMinute: 1000 });
    const app = uniqueCode('app');
    await gate.admit(app, nonce());
    await database.db
      .updateTable('nonces')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('app_id', '=', app)
      .execute();
    await gate.purge();
    const left = await database.db.selectFrom('nonces').select('nonce').where('app_id', '=', app).execute();
    expect(left).toHaveLength(0);
  });
});
