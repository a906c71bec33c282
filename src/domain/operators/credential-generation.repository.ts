import { sql } from 'kysely';
import type { Db } from '../../db/client.js';

/**
 * An operator's credential generation: every console session carries the one it was opened
 * under and is live only while it is still the operator's (ConsoleSessionsRepository.touch).
 * Moving it on is the one way sessions end when the operator's standing changes, on every
 * instance at once, whatever sessions exist or are being opened meanwhile.
 */
export class CredentialGenerationRepository {
  constructor(private readonly db: Db) {}

  /** The generation a session opened now is tied to. */
  async current(operatorId: string): Promise<number | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .select('credential_generation')
      .where('id', '=', operatorId)
      .executeTakeFirst();
    return row?.credential_generation;
  }

  /**
   * Ends every console session of the operator: the generation moves on, and the rows of the
   * ended sessions go. `keep`, the hash of the session asking (its own new password), moves on
   * with it.
   */
  async endSessions(operatorId: string, keep?: string): Promise<void> {
    const row = await this.db
      .updateTable('operators')
      .set((eb) => ({ credential_generation: eb('credential_generation', '+', 1) }))
      .where('id', '=', operatorId)
      .returning('credential_generation')
      .executeTakeFirst();
    if (row === undefined) return;
    if (keep !== undefined) {
      await this.db
        .updateTable('console_sessions')
        .set({ operator_generation: row.credential_generation })
        .where('id_hash', '=', keep)
        .where('operator_id', '=', operatorId)
        .execute();
    }
    await this.db
      .deleteFrom('console_sessions')
      .where('operator_id', '=', operatorId)
      .where((eb) =>
        eb.or([
          eb('operator_generation', 'is', null),
          eb('operator_generation', '<', sql<number>`${row.credential_generation}`),
        ]),
      )
      .execute();
  }
}
