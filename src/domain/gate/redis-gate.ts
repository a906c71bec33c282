import type { Redis } from 'ioredis';
import type { Db } from '../../db/client.js';
import { sha256 } from '../shared/secrets.js';
import { TokensRepository } from '../tokens/tokens.repository.js';
import {
  admissionOf,
  currentWindow,
  type Admission,
  type CallCheck,
  type CallFacts,
  type GateSettings,
  type RequestGate,
} from './gate.js';

/**
 * Redis keeps nonces and counters with their own expiry, so there is nothing to purge. Tokens stay
 * in the database (`db`), looked up on every call so that revocation is immediate.
 */
export class RedisGate implements RequestGate {
  /** The client library is loaded only when Redis is configured: it costs a server some 12 MB. */
  private readonly redis: Promise<Redis>;

  constructor(
    url: string,
    private readonly settings: GateSettings,
    private readonly db?: Db,
  ) {
    this.redis = import('ioredis').then(({ Redis }) => {
      const redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
      // Connection trouble surfaces as a failed command, which the request answers with "500".
      redis.on('error', () => undefined);
      return redis;
    });
  }

  async admit(
    appId: string,
    nonce: string | null,
    limitPerMinute = this.settings.limitPerMinute,
  ): Promise<Admission> {
    const rateKey = `keyward:rate:${appId}:${currentWindow()}`;
    const multi = (await this.redis).multi().incr(rateKey).expire(rateKey, 120);
    // A call whose replay is harmless records no nonce.
    if (nonce !== null)
      multi.set(`keyward:nonce:${appId}:${nonce}`, '1', 'EX', this.settings.nonceTtlSeconds, 'NX');
    const result = await multi.exec();
    if (result === null) throw new Error('redis transaction aborted');
    const [rate, , set] = result;
    if (rate?.[0] || set?.[0]) throw rate?.[0] ?? set?.[0] ?? new Error('redis error');
    return admissionOf(Number(rate?.[1]), nonce === null || set?.[1] === 'OK', limitPerMinute);
  }

  /** The tokens from the database (both at once), then the admission from Redis. */
  async check(call: CallCheck): Promise<CallFacts> {
    if (this.db === undefined) throw new Error('the Redis gate checks tokens only when given the database');
    const tokens = new TokensRepository(this.db);
    const [found, user] = await Promise.all([
      tokens.findLive(sha256(call.appToken)),
      call.userToken === undefined ? undefined : tokens.findLiveUser(sha256(call.userToken)),
    ]);
    const app = found?.kind === 'app' ? found : undefined;
    const admission = app?.scopes.includes(call.scope)
      ? await this.admit(app.appId, call.nonce, app.rateLimitPerMinute ?? this.settings.limitPerMinute)
      : undefined;
    return { app, admission, user };
  }

  async countRequests(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const window = currentWindow();
    const multi = (await this.redis).multi();
    for (const key of keys)
      multi.incr(`keyward:rate:${key}:${window}`).expire(`keyward:rate:${key}:${window}`, 120);
    const result = await multi.exec();
    if (result === null) throw new Error('redis transaction aborted');
    const failed = result.find(([error]) => error);
    if (failed) throw failed[0];
    return keys.map((_, i) => Number(result[i * 2]?.[1]));
  }

  async peekCounts(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return [];
    const window = currentWindow();
    const values = await (await this.redis).mget(keys.map((key) => `keyward:rate:${key}:${window}`));
    return values.map((value) => (value === null ? 0 : Number(value)));
  }

  async purge(): Promise<void> {}

  async close(): Promise<void> {
    await (await this.redis).quit().catch(() => undefined);
  }
}
