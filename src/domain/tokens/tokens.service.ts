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

  async issue(input: { appId: string; scopes: string[]; memberId: number | null }): Promise<IssuedToken> {
    const token = randomSecret();
    await this.tokens.insert({
      tokenHash: sha256(token),
      appId: input.appId,
      memberId: input.memberId,
      kind: input.memberId === null ? 'app' : 'user',
      scopes: input.scopes,
      expiresAt: new Date(Date.now() + this.ttlSeconds * 1000),
    });
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

  async revokeForMember(memberId: number): Promise<void> {
    await this.tokens.revokeForMember(memberId);
  }

  async purgeExpired(): Promise<void> {
    await this.tokens.purgeExpired();
  }
}
