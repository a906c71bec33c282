import { describe, expect, it } from 'vitest';
import { NONCE_PATTERN } from '../../src/domain/gate/gate.js';
import { nonceInterceptor } from '../../src/http/docs/nonce-interceptor.js';

describe('the /docs request interceptor', () => {
  it('gives every call a fresh, valid g_nonce and keeps the rest of the URL', () => {
    const typed = 'http://127.0.0.1:8080/order/api/order/v1/shellnums?g_nonce=typed-once-1234&x=1';
    const first = new URL(nonceInterceptor({ url: typed }).url);
    const second = new URL(nonceInterceptor({ url: typed }).url);
    expect(first.pathname).toBe('/order/api/order/v1/shellnums');
    expect(first.searchParams.get('x')).toBe('1');
    const nonces = [first.searchParams.get('g_nonce'), second.searchParams.get('g_nonce')];
    for (const nonce of nonces) expect(nonce).toMatch(NONCE_PATTERN);
    expect(nonces[0]).not.toBe('typed-once-1234');
    expect(nonces[0]).not.toBe(nonces[1]);
  });

  it('leaves calls without a nonce alone', () => {
    const url = 'http://127.0.0.1:8080/oauth2/token';
    expect(nonceInterceptor({ url }).url).toBe(url);
  });
});
