import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { metricsArePublic } from '../../src/server.js';

const config = (env: Record<string, string>) => loadConfig({ DATA_DIR: '/nonexistent', ...env });

describe('the start warning about /metrics', () => {
  it('warns behind a proxy with neither a metrics token nor an admin listener', () => {
    expect(metricsArePublic(config({ TRUST_PROXY: '1' }))).toBe(true);
  });
  it('is quiet with a token, an admin listener, or no proxy', () => {
    expect(metricsArePublic(config({ TRUST_PROXY: '1', METRICS_TOKEN: 'scrape-token' }))).toBe(false);
    expect(metricsArePublic(config({ TRUST_PROXY: '1', ADMIN_PORT: '0' }))).toBe(false);
    expect(metricsArePublic(config({}))).toBe(false);
  });
});
