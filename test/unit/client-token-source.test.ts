import { describe, expect, it } from 'vitest';
import { TokenSource, type TokenAnswer } from '../../packages/client/src/token-source.js';

function source(lifetimeSeconds: number) {
  let clock = 0;
  let issued = 0;
  const tokens = new TokenSource(
    async (): Promise<TokenAnswer> => {
      issued += 1;
      return { access_token: `token-${issued}`, expires_in: lifetimeSeconds };
    },
    () => clock,
  );
  return {
    tokens,
    advance: (ms: number) => {
      clock += ms;
    },
    issued: () => issued,
  };
}

describe('client token source', () => {
  it('reuses a token while it lives and renews it a minute before it expires', async () => {
    const { tokens, advance, issued } = source(7200);
    expect(await tokens.lease()).toEqual({ token: 'token-1', fresh: true });
    advance(7200_000 - 60_001);
    expect(await tokens.lease()).toEqual({ token: 'token-1', fresh: false });
    advance(1);
    expect(await tokens.lease()).toEqual({ token: 'token-2', fresh: true });
    expect(issued()).toBe(2);
  });

  it('renews a short-lived token at 90% of its lifetime', async () => {
    const { tokens, advance } = source(10);
    await tokens.lease();
    advance(8_999);
    expect((await tokens.lease()).token).toBe('token-1');
    advance(1);
    expect((await tokens.lease()).token).toBe('token-2');
  });

  it('asks once for concurrent callers', async () => {
    const { tokens, issued } = source(7200);
    const leases = await Promise.all([tokens.lease(), tokens.lease(), tokens.lease()]);
    expect(new Set(leases.map((l) => l.token))).toEqual(new Set(['token-1']));
    expect(issued()).toBe(1);
  });

  it('drops a discarded token, but only that one', async () => {
    const { tokens } = source(7200);
    await tokens.lease();
    tokens.discard('some-other-token');
    expect((await tokens.lease()).token).toBe('token-1');
    tokens.discard('token-1');
    expect((await tokens.lease()).token).toBe('token-2');
  });
});
