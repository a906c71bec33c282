export interface TokenAnswer {
  access_token: string;
  expires_in: number;
}

export interface Lease {
  token: string;
  /** Obtained for this call: a refusal of it is not cured by asking again. */
  fresh: boolean;
}

/**
 * One kind of token (the app's, or a member's), obtained on first use, reused while it lives and
 * renewed shortly before it expires. Concurrent callers share one request to the token endpoint.
 */
export class TokenSource {
  private current: { token: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;

  constructor(
    private readonly obtain: () => Promise<TokenAnswer>,
    private readonly now: () => number = Date.now,
  ) {}

  async lease(): Promise<Lease> {
    if (this.current !== undefined && this.now() < this.current.renewAt) {
      return { token: this.current.token, fresh: false };
    }
    this.pending ??= this.renew().finally(() => {
      this.pending = undefined;
    });
    return { token: await this.pending, fresh: true };
  }

  /** The server refused `token` (expired early, revoked): the next lease asks for a new one. */
  discard(token: string): void {
    if (this.current?.token === token) this.current = undefined;
  }

  private async renew(): Promise<string> {
    const answer = await this.obtain();
    const lifetimeMs = answer.expires_in * 1000;
    // Renew a minute early, or at 90% of a short lifetime, so no call carries a dying token.
    const margin = Math.min(60_000, lifetimeMs / 10);
    this.current = { token: answer.access_token, renewAt: this.now() + lifetimeMs - margin };
    return answer.access_token;
  }
}
