import { Redis } from 'ioredis';

export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** Redis is optional for Keyward; CI sets KEYWARD_REQUIRE_REDIS so its suites never silently skip. */
export async function redisAvailable(): Promise<boolean> {
  if (process.env.KEYWARD_REQUIRE_REDIS === '1') return true;
  const probe = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}
