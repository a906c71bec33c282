import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/client.js';
import type { CustomersTable } from '../../db/schema.js';

export interface CustomerRecord {
  id: string;
  channelCode: string | null;
  channelCustomerId: string | null;
  crmCustomerId: string | null;
  name: string | null;
  customerType: string | null;
  branchCode: string | null;
  branchName: string | null;
  address: string | null;
  securityMobile: string | null;
  enterpriseId: number | null;
  isDefault: boolean;
  gongxin: boolean;
  createdAt: number;
  updatedAt: number;
}

export type NewCustomer = Omit<CustomerRecord, 'createdAt' | 'updatedAt'>;

function toRecord(row: Selectable<CustomersTable>): CustomerRecord {
  return {
    id: row.id,
    channelCode: row.channel_code,
    channelCustomerId: row.channel_customer_id,
    crmCustomerId: row.crm_customer_id,
    name: row.name,
    customerType: row.customer_type,
    branchCode: row.branch_code,
    branchName: row.branch_name,
    address: row.address,
    securityMobile: row.security_mobile,
    enterpriseId: row.enterprise_id,
    isDefault: row.is_default,
    gongxin: row.gongxin,
    createdAt: row.created_at.getTime(),
    updatedAt: row.updated_at.getTime(),
  };
}

/**
 * Channel customers. Callers scope by channel: a customer of a channel the app does not hold is
 * treated as absent by the services, never shown.
 */
export class CustomersRepository {
  constructor(private readonly db: Db) {}

  async findById(id: string): Promise<CustomerRecord | undefined> {
    const row = await this.db.selectFrom('customers').selectAll().where('id', '=', id).executeTakeFirst();
    return row && toRecord(row);
  }

  /** Several at once (a batch of orders naming its customers by id); unknown ids are left out. */
  async findByIds(ids: string[]): Promise<CustomerRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('id', '=', sql<string>`any(${ids}::text[])`)
      .execute();
    return rows.map(toRecord);
  }

  async findByChannel(channelCode: string, channelCustomerId: string): Promise<CustomerRecord | undefined> {
    const row = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('channel_code', '=', channelCode)
      .where('channel_customer_id', '=', channelCustomerId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async findByCrm(crmCustomerId: string): Promise<CustomerRecord | undefined> {
    const row = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('crm_customer_id', '=', crmCustomerId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async listByEnterprise(enterpriseId: number): Promise<CustomerRecord[]> {
    const rows = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('enterprise_id', '=', enterpriseId)
      .orderBy('created_at')
      .execute();
    return rows.map(toRecord);
  }

  /**
   * Inserts unless a customer with the same channel key or CRM id exists (a concurrent caller won):
   * returns undefined then, and the caller reads the winner.
   */
  async insertIfAbsent(customer: NewCustomer): Promise<CustomerRecord | undefined> {
    const row = await this.db
      .insertInto('customers')
      .values({
        id: customer.id,
        channel_code: customer.channelCode,
        channel_customer_id: customer.channelCustomerId,
        crm_customer_id: customer.crmCustomerId,
        name: customer.name,
        customer_type: customer.customerType,
        branch_code: customer.branchCode,
        branch_name: customer.branchName,
        address: customer.address,
        security_mobile: customer.securityMobile,
        enterprise_id: customer.enterpriseId,
        is_default: customer.isDefault,
        gongxin: customer.gongxin,
      })
      .onConflict((oc) => oc.doNothing())
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  async update(
    id: string,
    changes: Partial<
      Pick<
        CustomerRecord,
        'name' | 'branchName' | 'address' | 'enterpriseId' | 'isDefault' | 'gongxin' | 'crmCustomerId'
      >
    >,
  ): Promise<CustomerRecord | undefined> {
    const row = await this.db
      .updateTable('customers')
      .set({
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.branchName === undefined ? {} : { branch_name: changes.branchName }),
        ...(changes.address === undefined ? {} : { address: changes.address }),
        ...(changes.enterpriseId === undefined ? {} : { enterprise_id: changes.enterpriseId }),
        ...(changes.isDefault === undefined ? {} : { is_default: changes.isDefault }),
        ...(changes.gongxin === undefined ? {} : { gongxin: changes.gongxin }),
        ...(changes.crmCustomerId === undefined ? {} : { crm_customer_id: changes.crmCustomerId }),
        updated_at: new Date(),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Reads the customer and row-locks it until the transaction ends, so concurrent binds of the
   * same customer queue up and the later one sees what the first one did.
   */
  async lockByChannel(channelCode: string, channelCustomerId: string): Promise<CustomerRecord | undefined> {
    const row = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('channel_code', '=', channelCode)
      .where('channel_customer_id', '=', channelCustomerId)
      .forUpdate()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** As lockByChannel, by CRM id, seeing only customers of the caller's channels. */
  async lockVisibleByCrm(crmCustomerId: string, channels: string[]): Promise<CustomerRecord | undefined> {
    if (channels.length === 0) return undefined;
    const row = await this.db
      .selectFrom('customers')
      .selectAll()
      .where('crm_customer_id', '=', crmCustomerId)
      .where('channel_code', '=', sql<string>`any(${channels}::text[])`)
      .forUpdate()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /**
   * Makes a customer that belongs to no enterprise the default customer of `enterpriseId`. Fields
   * given replace the stored ones; a missing customer type becomes `company`.
   */
  async bindAsDefault(
    id: string,
    enterpriseId: number,
    changes: Partial<Pick<CustomerRecord, 'name' | 'branchName' | 'address' | 'securityMobile'>> & {
      gongxin?: boolean;
    },
  ): Promise<CustomerRecord> {
    const row = await this.db
      .updateTable('customers')
      .set((eb) => ({
        enterprise_id: enterpriseId,
        is_default: true,
        customer_type: eb.fn.coalesce('customer_type', eb.val('company')),
        ...(changes.name === undefined ? {} : { name: changes.name }),
        ...(changes.branchName === undefined ? {} : { branch_name: changes.branchName }),
        ...(changes.address === undefined ? {} : { address: changes.address }),
        ...(changes.securityMobile === undefined ? {} : { security_mobile: changes.securityMobile }),
        ...(changes.gongxin === undefined ? {} : { gongxin: changes.gongxin }),
        updated_at: new Date(),
      }))
      .where('id', '=', id)
      .where('enterprise_id', 'is', null)
      .returningAll()
      .executeTakeFirstOrThrow();
    return toRecord(row);
  }
}
