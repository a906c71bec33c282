import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface SsoRequest {
  nonce: string;
  codeVerifier: string;
}

/** Sign-ins in flight between the redirect to the provider and its return (migration 0172). */
export class SsoRequestsRepository {
  constructor(private readonly db: Db) {}

  async insert(input: {
    stateHash: string;
    browserHash: string;
    nonce: string;
    codeVerifier: string;
    expiresAt: Date;
  }): Promise<void> {
    await this.db
      .insertInto('sso_requests')
      .values({
        state_hash: input.stateHash,
        browser_hash: input.browserHash,
        nonce: input.nonce,
        code_verifier: input.codeVerifier,
        expires_at: input.expiresAt,
      })
      .execute();
  }

  /**
   * Takes the request once: deleted as it is read, so a replayed return finds nothing, also when
   * two arrive at once on two instances. A state with another browser's cookie, or too old, finds
   * nothing either (and stays for its own browser until it expires).
   */
  async take(stateHash: string, browserHash: string): Promise<SsoRequest | undefined> {
    const row = await this.db
      .deleteFrom('sso_requests')
      .where('state_hash', '=', stateHash)
      .where('browser_hash', '=', browserHash)
      .where('expires_at', '>', sql<Date>`now()`)
      .returning(['nonce', 'code_verifier'])
      .executeTakeFirst();
    return row === undefined ? undefined : { nonce: row.nonce, codeVerifier: row.code_verifier };
  }

  /** Sign-ins abandoned at the provider: removed by the next one to start. */
  async deleteExpired(): Promise<void> {
    await this.db
      .deleteFrom('sso_requests')
      .where('expires_at', '<=', sql<Date>`now()`)
      .execute();
  }
}
