import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

export interface SsoRequest {
  nonce: string;
  codeVerifier: string;
}

/** Sign-ins in flight between the redirect to the provider and its return (migration 0172). */
export class SsoRequestsRepository {
  constructor(private readonly db: Db) {}

  /**
   * Keeps a sign-in unless `inFlight` unexpired ones are kept already: anyone may start one, so
   * their rows are bounded. One statement; instances starting at once may pass the bound by
   * their number, no more. Counts at most `inFlight` rows (through the expiry index).
   */
  async insertWithin(
    inFlight: number,
    input: { stateHash: string; browserHash: string; nonce: string; codeVerifier: string; expiresAt: Date },
  ): Promise<boolean> {
    const kept = await sql<{ state_hash: string }>`
      insert into sso_requests (state_hash, browser_hash, nonce, code_verifier, expires_at)
      select ${input.stateHash}, ${input.browserHash}, ${input.nonce}, ${input.codeVerifier},
             ${input.expiresAt}::timestamptz
      where (select count(*) from (select 1 from sso_requests where expires_at > now() limit ${inFlight}) live)
            < ${inFlight}
      returning state_hash`.execute(this.db);
    return kept.rows.length === 1;
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
