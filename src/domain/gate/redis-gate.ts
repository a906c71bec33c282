import { Redis } from 'ioredis';
import { currentWindow, type Admission, type GateSettings, type RequestGate } from './gate.js';

/** Redis keeps nonces and counters with their own expiry, so there is nothing to purge. */
export class RedisGate implements RequestGate {
  private readonly redis: Redis;

  constructor(
    url: string,
    private readonly settings: GateSettings,
  ) {
    this.redis = new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
    // Connection trouble surfaces as a failed command, which the request answers with "500".
    this.redis.on('error', () => undefined);
  }

  async admit(appId: string, nonce: string): Promise<Admission> {
    const rateKey = `keyward:rate:${appId}:${currentWindow()}`;
    const result = await this.redis
      .multi()
      .incr(rateKey)
      .expire(rateKey, 120)
      .set(`keyward:nonce:${appId}:${nonce}`, '1', 'EX', this.settings.nonceTtlSeconds, 'NX')
      .exec();
    if (result === null) throw new Error('redis transaction aborted');
    const [rate, , set] = result;
    if (rate?.[0] || set?.[0]) throw rate?.[0] ?? set?.[0] ?? new Error('redis error');
    if (Number(rate?.[1]) > this.settings.limitPerMinute) return 'limited';
    return set?.[1] === 'OK' ? 'ok' : 'replayed';
  }

  async purge(): Promise<void> {}

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}
