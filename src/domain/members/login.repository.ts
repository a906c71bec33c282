import type { Db } from '../../db/client.js';

export interface LoginCandidate {
  memberId: number;
  passwordHash: string | null;
}

export class LoginRepository {
  constructor(private readonly db: Db) {}

  async findByAccount(account: string): Promise<LoginCandidate | undefined> {
    const row = await this.db
      .selectFrom('members')
      .select(['id', 'password_hash'])
      .where('account', '=', account)
      .where('deleted', '=', false)
      .executeTakeFirst();
    return row && { memberId: row.id, passwordHash: row.password_hash };
  }
}
