import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { OperatorRole } from '../../db/schema.js';

/** An operator as single sign-on finds one: with the provider's user it is tied to, if any. */
export interface SsoOperator {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  ssoSubject: string | null;
}

const COLUMNS = ['id', 'name', 'email', 'role', 'status', 'sso_subject'] as const;

const operatorOf = (r: {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  sso_subject: string | null;
}): SsoOperator => ({
  id: r.id,
  name: r.name,
  email: r.email,
  role: r.role,
  status: r.status,
  ssoSubject: r.sso_subject,
});

/**
 * Operators by the provider's user (`sso_subject`: issuer and subject) or by email. Reads lock the
 * row for the rest of the transaction: a sign-in's role change takes turns with the CLI's.
 */
export class SsoOperatorsRepository {
  constructor(private readonly db: Db) {}

  async lockBySubject(subject: string): Promise<SsoOperator | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .select(COLUMNS)
      .where('sso_subject', '=', subject)
      .forUpdate()
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }

  async lockByEmail(email: string): Promise<SsoOperator | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .select(COLUMNS)
      .where(sql`lower(email)`, '=', email.toLowerCase())
      .forUpdate()
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }

  async linkSubject(id: string, subject: string): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ sso_subject: subject, updated_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  /**
   * An operator made at first sign-in: no password (the provider vouches for them). Undefined
   * when the email or the subject is taken meanwhile (the unique indexes decide, also under races).
   */
  async insertProvisioned(input: {
    id: string;
    name: string;
    email: string;
    role: OperatorRole;
    subject: string;
  }): Promise<SsoOperator | undefined> {
    const row = await this.db
      .insertInto('operators')
      .values({
        id: input.id,
        name: input.name,
        email: input.email,
        role: input.role,
        password_hash: null,
        sso_subject: input.subject,
      })
      .onConflict((oc) => oc.doNothing())
      .returning(COLUMNS)
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }
}
