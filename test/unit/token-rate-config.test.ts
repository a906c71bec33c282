import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';

describe('the token endpoint limits from the environment', () => {
  it('defaults to 600 requests per address and 60 failures per client and address a minute', () => {
    expect(loadConfig({}).tokenRate).toEqual({ perAddress: 600, failuresPerClientAddress: 60 });
    expect(loadConfig({ TOKEN_RATE_PER_IP: '50', TOKEN_FAILS_PER_CLIENT_IP: '5' }).tokenRate).toEqual({
      perAddress: 50,
      failuresPerClientAddress: 5,
    });
    expect(() => loadConfig({ TOKEN_FAILS_PER_CLIENT_IP: '0' })).toThrow(/TOKEN_FAILS_PER_CLIENT_IP/);
  });

  it('refuses TOKEN_RATE_PER_CLIENT, a limit one address could spend for all, naming what replaced it', () => {
    expect(() => loadConfig({ TOKEN_RATE_PER_CLIENT: '300' })).toThrow(
      /TOKEN_RATE_PER_CLIENT is no longer read.*TOKEN_FAILS_PER_CLIENT_IP/,
    );
    expect(loadConfig({ TOKEN_RATE_PER_CLIENT: '' }).tokenRate.failuresPerClientAddress).toBe(60);
  });
});
