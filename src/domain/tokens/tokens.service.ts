import type { Db } from '../../db/client.js';
import { randomSecret, sha256 } from '../shared/secrets.js';
import { TokensRepository, type TokenGrant, type UserTokenGrant } from './tokens.repository.js';

export interface IssuedToken {
  access_token: string;
  token_type: 'bearer';
  expires_in: number;
  scope: string;
}

export class TokensService {
  private readonly tokens: TokensRepository;

  constructor(
    db: Db,
    private readonly ttlSeconds: number,
  ) {
    this.tokens = new TokensRepository(db);
  }

  /**
   * A new token for the authenticated client `app`, or nothing when the app was disabled or its
   * secret rotated since it authenticated (the caller answers as for a wrong secret).
   */
  async issue(input: {
    app: { id: string; secretHash: string };
    scopes: string[];
    memberId: number | null;
  }): Promise<IssuedToken | undefined> {
    const token = randomSecret();
    const stored = await this.tokens.insert({
      tokenHash: sha256(token),
      appId: input.app.id,
      secretHash: input.app.secretHash,
      memberId: input.memberId,
      kind: input.memberId === null ? 'app' : 'user',
      scopes: input.scopes,
      expiresAt: new Date(Date.now() + this.ttlSeconds * 1000),
    });
    if (!stored) return undefined;
    return {
      access_token: token,
      token_type: 'bearer',
      expires_in: this.ttlSeconds,
      scope: input.scopes.join(' '),
    };
  }

  /** Looked up in the database on every call, so revocation holds on every instance at once. */
  async resolveAppToken(token: string): Promise<TokenGrant | undefined> {
    const grant = await this.tokens.findLive(sha256(token));
    return grant?.kind === 'app' ? grant : undefined;
  }

  async resolveUserToken(token: string): Promise<UserTokenGrant | undefined> {
    return this.tokens.findLiveUser(sha256(token));
  }

  /** The live user behind a token's hash (the console keeps hashes, never tokens). */
  async resolveUserTokenHash(tokenHash: string): Promise<UserTokenGrant | undefined> {
    return this.tokens.findLiveUser(tokenHash);
  }

  async revokeHash(tokenHash: string): Promise<void> {
    await this.tokens.revoke(tokenHash);
  }

  async revokeForMember(memberId: number): Promise<void> {
    await this.tokens.revokeForMember(memberId);
  }

  async purgeExpired(): Promise<void> {
    await this.tokens.purgeExpired();
  }
}
