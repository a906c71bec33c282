import { sql } from 'kysely';
import type { Db } from '../../db/client.js';
import { preparedQuery, type Slots } from '../../db/prepared-statements.js';

export interface EnterpriseRecord {
  id: number;
  globalId: string;
  name: string;
  code: string;
}

/** An enterprise as an operator sees it: how they learn the administrator's account. */
export interface EnterpriseView {
  enterpriseGlobalId: string;
  enterpriseName: string;
  enterpriseCode: string;
  adminAccount: string | null;
}

/** The spec's "Enterprise customer" (order ops 1 and 3). */
export interface EnterpriseCustomer {
  customerId: string;
  channelCode: string;
  /** Null for a customer order op 2 created from its CRM id alone. */
  channelCustomerId: string | null;
  enterpriseGlobalId: string;
  enterpriseName: string;
  isDefault: boolean;
}

const columns = ['id', 'global_id', 'name', 'code'] as const;

type ChannelCustomerSlot = 'channelCode' | 'channelCustomerId' | 'channels';

interface ChannelCustomerRow {
  id: string;
  channel_code: string | null;
  channel_customer_id: string | null;
  is_default: boolean;
  global_id: string;
  enterprise_name: string;
}

/**
 * Order op 3's statement, prepared: the customers of the enterprise a channel customer belongs to,
 * only those in the caller's channels (the others are invisible to it), the default first.
 */
function customersOf(defaultOnly: boolean) {
  return preparedQuery<ChannelCustomerRow, ChannelCustomerSlot>(
    ['channelCode', 'channelCustomerId', 'channels'],
    (db, v: Slots<ChannelCustomerSlot>) => {
      let select = db
        .selectFrom('customers as q')
        .innerJoin('enterprises as e', 'e.id', 'q.enterprise_id')
        .innerJoin('customers as c', 'c.enterprise_id', 'e.id')
        .select([
          'c.id',
          'c.channel_code',
          'c.channel_customer_id',
          'c.is_default',
          'e.global_id',
          'e.name as enterprise_name',
        ])
        .where('q.channel_code', '=', v.channelCode)
        .where('q.channel_customer_id', '=', v.channelCustomerId)
        // A check of the parameter, not an index condition: an array of unknown length in the
        // index condition makes the generic plan look dearer than planning anew on every call.
        .where(sql<boolean>`${v.channelCode} = any(${v.channels}::text[])`)
        .where('c.channel_code', '=', sql<string>`any(${v.channels}::text[])`);
      if (defaultOnly) select = select.where('c.is_default', '=', true);
      return sql`${select.orderBy('c.is_default', 'desc').orderBy('c.created_at').orderBy('c.id')}`;
    },
  );
}

const customersOfChannelCustomer = { all: customersOf(false), defaultOnly: customersOf(true) };

function toRecord(row: { id: number; global_id: string; name: string; code: string }): EnterpriseRecord {
  return { id: row.id, globalId: row.global_id, name: row.name, code: row.code };
}

/**
 * Enterprises are reached through a customer the caller may see (its channel) or, on the admin
 * API, by global id: never listed across tenants.
 */
export class EnterprisesRepository {
  constructor(private readonly db: Db) {}

  /** Undefined when the code is taken (by a committed or a concurrent enterprise): draw another. */
  async insertIfCodeFree(enterprise: Omit<EnterpriseRecord, 'id'>): Promise<EnterpriseRecord | undefined> {
    const row = await this.db
      .insertInto('enterprises')
      .values({ global_id: enterprise.globalId, name: enterprise.name, code: enterprise.code })
      .onConflict((oc) => oc.doNothing())
      .returning(columns)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** By the internal id of a customer's enterprise; callers have already scoped the customer. */
  async findById(id: number): Promise<EnterpriseRecord | undefined> {
    const row = await this.db
      .selectFrom('enterprises')
      .select(columns)
      .where('id', '=', id)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async rename(id: number, name: string): Promise<void> {
    await this.db
      .updateTable('enterprises')
      .set({ name, updated_at: new Date() })
      .where('id', '=', id)
      .execute();
  }

  async findView(globalId: string): Promise<EnterpriseView | undefined> {
    const row = await this.db
      .selectFrom('enterprises as e')
      .leftJoin('members as m', (join) =>
        join.onRef('m.enterprise_id', '=', 'e.id').on('m.identity', '=', 'admin').on('m.deleted', '=', false),
      )
      .select(['e.global_id', 'e.name', 'e.code', 'm.account'])
      .where('e.global_id', '=', globalId)
      .orderBy('m.id')
      .executeTakeFirst();
    return (
      row && {
        enterpriseGlobalId: row.global_id,
        enterpriseName: row.name,
        enterpriseCode: row.code,
        adminAccount: row.account,
      }
    );
  }

  /**
   * Order op 3: the customers of the enterprise the channel customer belongs to, only those of the
   * caller's channels (the others are invisible to it), the default first.
   */
  async listCustomersOfChannelCustomer(query: {
    channelCode: string;
    channelCustomerId: string;
    channels: string[];
    defaultOnly: boolean;
  }): Promise<EnterpriseCustomer[]> {
    if (query.channels.length === 0) return [];
    const statement = query.defaultOnly
      ? customersOfChannelCustomer.defaultOnly
      : customersOfChannelCustomer.all;
    const rows = await statement(this.db, query);
    return rows.flatMap((row) =>
      row.channel_code === null
        ? []
        : [
            {
              customerId: row.id,
              channelCode: row.channel_code,
              channelCustomerId: row.channel_customer_id,
              enterpriseGlobalId: row.global_id,
              enterpriseName: row.enterprise_name,
              isDefault: row.is_default,
            },
          ],
    );
  }
}
