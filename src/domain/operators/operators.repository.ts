import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import type { OperatorRole } from '../../db/schema.js';

export interface OperatorRow {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  createdAt: Date;
  lastSignInAt: Date | null;
}

export interface OperatorTokenRow {
  id: string;
  operatorId: string;
  name: string;
  role: OperatorRole;
  createdAt: Date;
  expiresAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A token as authentication finds it: with its operator's name, role and status now. */
export interface TokenHolder {
  tokenId: string;
  tokenRole: OperatorRole;
  expiresAt: Date;
  revokedAt: Date | null;
  operatorId: string;
  operatorName: string;
  operatorRole: OperatorRole;
  operatorStatus: 'active' | 'disabled';
  /** Every token this one was made from is live still (none revoked, none expired). */
  lineageLive: boolean;
}

/** A token that is making another, as the transaction locked it. */
export interface MakingToken {
  id: string;
  role: OperatorRole;
  expiresAt: Date;
  revokedAt: Date | null;
  lineage: string[];
  operatorRole: OperatorRole;
  operatorStatus: 'active' | 'disabled';
}

const OPERATOR_COLUMNS = ['id', 'name', 'email', 'role', 'status', 'created_at', 'last_sign_in_at'] as const;

type OperatorSelect = {
  id: string;
  name: string;
  email: string;
  role: OperatorRole;
  status: 'active' | 'disabled';
  created_at: Date;
  last_sign_in_at: Date | null;
};

const operatorOf = (r: OperatorSelect): OperatorRow => ({
  id: r.id,
  name: r.name,
  email: r.email,
  role: r.role,
  status: r.status,
  createdAt: r.created_at,
  lastSignInAt: r.last_sign_in_at,
});

export class OperatorsRepository {
  constructor(private readonly db: Db) {}

  /** Undefined when the email is taken (case ignored): the unique index decides, also under races. */
  async insert(input: {
    id: string;
    name: string;
    email: string;
    role: OperatorRole;
    passwordHash: string;
  }): Promise<OperatorRow | undefined> {
    const row = await this.db
      .insertInto('operators')
      .values({
        id: input.id,
        name: input.name,
        email: input.email,
        role: input.role,
        password_hash: input.passwordHash,
        must_change_password: true,
      })
      .onConflict((oc) => oc.expression(sql`lower(email)`).doNothing())
      .returning(OPERATOR_COLUMNS)
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }

  async list(): Promise<OperatorRow[]> {
    const rows = await this.db
      .selectFrom('operators')
      .select(OPERATOR_COLUMNS)
      .orderBy('created_at')
      .execute();
    return rows.map(operatorOf);
  }

  /** By id or by email (case ignored): what the CLI accepts as an operator's name. */
  async find(idOrEmail: string): Promise<OperatorRow | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .select(OPERATOR_COLUMNS)
      .where((eb) => eb.or([eb('id', '=', idOrEmail), eb(sql`lower(email)`, '=', idOrEmail.toLowerCase())]))
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }

  /** Locks the operator's row for the rest of the transaction: changes to one operator take turns. */
  async lock(id: string): Promise<OperatorRow | undefined> {
    const row = await this.db
      .selectFrom('operators')
      .select(OPERATOR_COLUMNS)
      .where('id', '=', id)
      .forUpdate()
      .executeTakeFirst();
    return row === undefined ? undefined : operatorOf(row);
  }

  /** Active owners other than `except`: the last one may not be demoted or disabled. */
  async activeOwnersBesides(except: string): Promise<number> {
    const row = await this.db
      .selectFrom('operators')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .where('role', '=', 'owner')
      .where('status', '=', 'active')
      .where('id', '<>', except)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async activeOwners(): Promise<number> {
    return this.activeOwnersBesides('');
  }

  async setRole(id: string, role: OperatorRole): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ role, updated_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  async setStatus(id: string, status: 'active' | 'disabled'): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ status, updated_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  async setPassword(id: string, passwordHash: string): Promise<void> {
    await this.db
      .updateTable('operators')
      .set({ password_hash: passwordHash, must_change_password: true, updated_at: sql`now()` })
      .where('id', '=', id)
      .execute();
  }

  /**
   * Locks a token that is making another, for the rest of the transaction: a revoke of it waits,
   * and then finds the new token in its lineage.
   */
  async lockMakingToken(id: string): Promise<MakingToken | undefined> {
    const row = await this.db
      .selectFrom('operator_tokens as t')
      .innerJoin('operators as o', 'o.id', 't.operator_id')
      .select([
        't.id',
        't.role',
        't.expires_at',
        't.revoked_at',
        't.lineage',
        'o.role as operator_role',
        'o.status as operator_status',
      ])
      .where('t.id', '=', id)
      .forUpdate('t')
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        role: row.role,
        expiresAt: row.expires_at,
        revokedAt: row.revoked_at,
        lineage: row.lineage,
        operatorRole: row.operator_role,
        operatorStatus: row.operator_status,
      }
    );
  }

  async insertToken(input: {
    id: string;
    operatorId: string;
    name: string;
    role: OperatorRole;
    tokenHash: string;
    expiresAt: Date;
    /** The tokens it is made from, nearest last; empty when made in person or with the admin key. */
    lineage: string[];
  }): Promise<OperatorTokenRow> {
    const row = await this.db
      .insertInto('operator_tokens')
      .values({
        id: input.id,
        operator_id: input.operatorId,
        name: input.name,
        role: input.role,
        token_hash: input.tokenHash,
        expires_at: input.expiresAt,
        lineage: input.lineage,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return tokenOf(row);
  }

  async tokensOf(operatorId: string): Promise<OperatorTokenRow[]> {
    const rows = await this.db
      .selectFrom('operator_tokens')
      .selectAll()
      .where('operator_id', '=', operatorId)
      .orderBy('created_at')
      .execute();
    return rows.map(tokenOf);
  }

  async findToken(id: string): Promise<OperatorTokenRow | undefined> {
    const row = await this.db
      .selectFrom('operator_tokens')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirst();
    return row === undefined ? undefined : tokenOf(row);
  }

  /**
   * Revokes one token and every token made from it (its lineage names it); false when it was
   * revoked already. Authentication checks the lineage too (lineageLive), so a token made while
   * this ran cannot outlive it either.
   */
  async revokeToken(id: string): Promise<boolean> {
    const rows = await this.db
      .updateTable('operator_tokens')
      .set({ revoked_at: sql`now()` })
      .where((eb) => eb.or([eb('id', '=', id), eb(sql.val(id), '=', eb.fn.any('lineage'))]))
      .where('revoked_at', 'is', null)
      .returning('id')
      .execute();
    return rows.some((r) => r.id === id);
  }

  /**
   * Revokes every live token of an operator (disabled), and every token made from one of them,
   * whoever it is for: how many.
   */
  async revokeTokensOf(operatorId: string): Promise<number> {
    const result = await sql<{ n: number }>`
      with theirs as (
        select array_agg(id) as ids from operator_tokens where operator_id = ${operatorId}
      ), revoked as (
        update operator_tokens set revoked_at = now()
         where revoked_at is null
           and (operator_id = ${operatorId} or lineage && (select coalesce(ids, '{}') from theirs))
        returning 1
      )
      select count(*)::int as n from revoked
    `.execute(this.db);
    return result.rows[0]?.n ?? 0;
  }

  async holderOf(tokenHash: string): Promise<TokenHolder | undefined> {
    const row = await this.db
      .selectFrom('operator_tokens as t')
      .innerJoin('operators as o', 'o.id', 't.operator_id')
      .select([
        't.id as token_id',
        't.role as token_role',
        't.expires_at',
        't.revoked_at',
        'o.id as operator_id',
        'o.name as operator_name',
        'o.role as operator_role',
        'o.status as operator_status',
        sql<boolean>`not exists (
          select 1 from operator_tokens a
           where a.id = any(t.lineage) and (a.revoked_at is not null or a.expires_at <= now()))`.as(
          'lineage_live',
        ),
      ])
      .where('t.token_hash', '=', tokenHash)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      tokenId: row.token_id,
      tokenRole: row.token_role,
      expiresAt: row.expires_at,
      revokedAt: row.revoked_at,
      operatorId: row.operator_id,
      operatorName: row.operator_name,
      operatorRole: row.operator_role,
      operatorStatus: row.operator_status,
      lineageLive: row.lineage_live,
    };
  }

  /**
   * Records a token's use, at most once a minute per token: an automation calling in a loop does not
   * turn every read into a write.
   */
  async touchToken(id: string): Promise<void> {
    await this.db
      .updateTable('operator_tokens')
      .set({ last_used_at: sql`now()` })
      .where('id', '=', id)
      .where((eb) =>
        eb.or([
          eb('last_used_at', 'is', null),
          eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`),
        ]),
      )
      .execute();
  }
}

function tokenOf(r: {
  id: string;
  operator_id: string;
  name: string;
  role: OperatorRole;
  created_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
  last_used_at: Date | null;
}): OperatorTokenRow {
  return {
    id: r.id,
    operatorId: r.operator_id,
    name: r.name,
    role: r.role,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
    lastUsedAt: r.last_used_at,
  };
}
