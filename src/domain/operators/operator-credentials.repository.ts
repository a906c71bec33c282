import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { OperatorRole } from '../../db/schema.js';

/** What a sign-in needs to know of an operator, beyond the password. */
export interface SignInState {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  mustChangePassword: boolean;
  /** A confirmed TOTP secret: sign-in asks for a code. */
  totpEnabled: boolean;
  /** The secret, confirmed or still being enrolled. */
  totpSecret: string | null;
  /** The owner requires two factors of everyone (platform_settings). */
  twoFactorRequired: boolean;
  ssoSubject: string | null;
  /** The credential generation a session opened now is tied to (CredentialGenerationRepository). */
  generation: number;
}

/** Operators' credentials: passwords, TOTP secrets and recovery codes, and the platform's rule. */
export class OperatorCredentialsRepository {
  constructor(private readonly db: Db) {}

  async passwordOf(
    email: string,
  ): Promise<{ id: string; passwordHash: string | null; generation: number } | undefined> {
    return this.db
      .selectFrom('operators')
      .select(['id', 'password_hash as passwordHash', 'credential_generation as generation'])
      .where(sql`lower(email)`, '=', email.toLowerCase())
      .where('status', '=', 'active')
      .executeTakeFirst();
  }

  async stateOf(id: string): Promise<SignInState | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .crossJoin('platform_settings')
      .select([
        'operators.id',
        'operators.name',
        'operators.email',
        'operators.role',
        'operators.status',
        'operators.must_change_password',
        'operators.totp_secret',
        'operators.totp_enabled_at',
        'operators.sso_subject',
        'operators.credential_generation',
        'platform_settings.require_two_factor',
      ])
      .where('operators.id', '=', id)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        name: row.name,
        email: row.email,
        role: row.role,
        status: row.status,
        mustChangePassword: row.must_change_password,
        totpEnabled: row.totp_enabled_at !== null,
        totpSecret: row.totp_secret,
        twoFactorRequired: row.require_two_factor,
        ssoSubject: row.sso_subject,
        generation: row.credential_generation,
      }
    );
  }

  async markSignedIn(id: string): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ last_sign_in_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  /** The operator's own choice of password: no longer a one-time one. */
  async setOwnPassword(id: string, passwordHash: string): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ password_hash: passwordHash, must_change_password: false, updated_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  /** A secret being enrolled: kept unconfirmed until a code made from it comes back. */
  async setPendingTotp(id: string, secret: string): Promise<boolean> {
    const row = await this.db
      .updateTable('operators')
      .set({ totp_secret: secret, totp_enabled_at: null, totp_last_step: null, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('totp_enabled_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /** Confirms the enrolment of `secret` (not another begun since) at `step`. */
  async enableTotp(id: string, secret: string, step: number): Promise<boolean> {
    const row = await this.db
      .updateTable('operators')
      .set({ totp_enabled_at: sql`now()`, totp_last_step: step, updated_at: sql`now()` })
      .where('id', '=', id)
      .where('totp_secret', '=', secret)
      .where('totp_enabled_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  /**
   * Accepts a code of `step` if no code of that step or a later one was accepted: one statement, so
   * two sign-ins racing with the same code cannot both pass.
   */
  async acceptStep(id: string, step: number): Promise<boolean> {
    const row = await this.db
      .updateTable('operators')
      .set({ totp_last_step: step })
      .where('id', '=', id)
      .where('totp_enabled_at', 'is not', null)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .returning('id')
      .executeTakeFirst();
    return row !== undefined;
  }

  async clearTotp(id: string): Promise<boolean> {
    const row = await this.db
      .updateTable('operators')
      .set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null, updated_at: sql`now()` })
      .where('id', '=', id)
      .returning((eb) => eb.val(true).as('done'))
      .executeTakeFirst();
    await this.db.deleteFrom('operator_recovery_codes').where('operator_id', '=', id).execute();
    return row !== undefined;
  }

  async replaceRecoveryCodes(id: string, hashes: readonly string[]): Promise<void> {
    await this.db.deleteFrom('operator_recovery_codes').where('operator_id', '=', id).execute();
    await this.db
      .insertInto('operator_recovery_codes')
      .values(hashes.map((code_hash) => ({ operator_id: id, code_hash })))
      .execute();
  }

  /** Spends a recovery code: true once, for the first use only. */
  async useRecoveryCode(id: string, hash: string): Promise<boolean> {
    const row = await this.db
      .updateTable('operator_recovery_codes')
      .set({ used_at: sql`now()` })
      .where('operator_id', '=', id)
      .where('code_hash', '=', hash)
      .where('used_at', 'is', null)
      .returning('code_hash')
      .executeTakeFirst();
    return row !== undefined;
  }

  async recoveryCodesLeft(id: string): Promise<number> {
    const row = await this.db
      .selectFrom('operator_recovery_codes')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('operator_id', '=', id)
      .where('used_at', 'is', null)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Counts one second-factor try on the account before the code is judged, in one statement, so
   * guesses sent together each take their own place in the count: answers the tries in the window
   * so far, this one included, or undefined while the account's second-factor step is locked.
   */
  async reserveSecondFactorTry(id: string, windowSeconds: number): Promise<number | undefined> {
    const fresh = sql<boolean>`second_factor_window_start is null
      or second_factor_window_start <= now() - make_interval(secs => ${windowSeconds})`;
    const row = await this.db
      .updateTable('operators')
      .set({
        second_factor_failures: sql<number>`case when ${fresh} then 1 else second_factor_failures + 1 end`,
        second_factor_window_start: sql<Date>`case when ${fresh} then now() else second_factor_window_start end`,
      })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb('second_factor_locked_until', 'is', null),
          eb('second_factor_locked_until', '<=', sql<Date>`now()`),
        ]),
      )
      .returning('second_factor_failures')
      .executeTakeFirst();
    return row?.second_factor_failures;
  }

  /** A right code: the account's count of wrong ones starts again. */
  async forgiveSecondFactorTries(id: string): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ second_factor_failures: 0, second_factor_window_start: null })
      .where('id', '=', id)
      .execute();
  }

  /** Refuses every second-factor code of the account for `seconds`. */
  async lockSecondFactor(id: string, seconds: number): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ second_factor_locked_until: sql<Date>`now() + make_interval(secs => ${seconds})` })
      .where('id', '=', id)
      .execute();
  }

  async twoFactorRequired(): Promise<boolean> {
    const row = await this.db.selectFrom('platform_settings').select('require_two_factor').executeTakeFirst();
    return row?.require_two_factor ?? false;
  }

  async setTwoFactorRequired(required: boolean): Promise<void> {
    await this.db
      .updateTable('platform_settings')
      .set({ require_two_factor: required, updated_at: sql`now()` })
      .execute();
  }
}
