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

/** One order op 3 call as its shared statement takes it (see listCustomersOfChannelCustomers). */
export interface ChannelCustomerQuery {
  channelCode: string;
  channelCustomerId: string;
  /** The calling app's channels: only customers of these are visible to the call. */
  channels: readonly string[];
  /** `defaultCustomer=Y`: the enterprise's default customer only. */
  defaultOnly: boolean;
}

const CHANNEL_CUSTOMER_SLOTS = [
  'ords',
  'channelCodes',
  'channelCustomerIds',
  'defaultOnly',
  'channelSets',
  'setIds',
  'setChannels',
] as const;
type ChannelCustomerSlot = (typeof CHANNEL_CUSTOMER_SLOTS)[number];

interface ChannelCustomerRow {
  ord: number;
  id: string;
  channel_code: string | null;
  channel_customer_id: string | null;
  is_default: boolean;
  global_id: string;
  enterprise_name: string;
}

/**
 * Order op 3's statement for many calls at once, prepared (its text never varies: the calls are
 * arrays). Per call (`q`, numbered by `ord`): the customers of the enterprise its channel customer
 * belongs to, only those in its own app's channels, the default first. The channels come as sets
 * (`allowed`: pairs of set and channel) that the calls name by number, so the calls of one app
 * carry its channels once; every visibility check joins on the call's own set, so a call batched
 * with another app's call never sees that app's channels. A call whose channel code is outside its
 * set answers nothing, as the single-call statement did.
 *
 * Two shapes are for the planner, which plans this prepared statement once (generic) only if that
 * plan looks no dearer than one made for the values at hand. Each array is read through a
 * subquery, so no plan knows the batch's length: planned for the length of the first few batches,
 * the custom plans would always look cheaper and be remade on every run. And each call finds its
 * channel customer by its own index probe (the lateral subquery; its limit keeps the planner from
 * turning it into a join, and the key is unique anyway), so a batch costs its calls' lookups,
 * never a scan of every customer, whatever length the planner assumes.
 */
const customersOfChannelCustomers = preparedQuery<ChannelCustomerRow, ChannelCustomerSlot>(
  CHANNEL_CUSTOMER_SLOTS,
  (_db, v: Slots<ChannelCustomerSlot>) => sql<ChannelCustomerRow>`
    with q as (
      select * from unnest((select ${v.ords}::int[]), (select ${v.channelCodes}::text[]),
                           (select ${v.channelCustomerIds}::text[]), (select ${v.defaultOnly}::bool[]),
                           (select ${v.channelSets}::int[]))
                 as q(ord, channel_code, channel_customer_id, default_only, set_id)
    ), allowed as (
      select * from unnest((select ${v.setIds}::int[]), (select ${v.setChannels}::text[]))
                 as a(set_id, channel_code)
    )
    select q.ord, c.id, c.channel_code, c.channel_customer_id, c.is_default,
           e.global_id, e.name as enterprise_name
      from q
      cross join lateral (
        select k.enterprise_id from customers k
         where k.channel_code = q.channel_code and k.channel_customer_id = q.channel_customer_id
         limit 1
      ) k
      join enterprises e on e.id = k.enterprise_id
      join customers c on c.enterprise_id = e.id and (c.is_default or not q.default_only)
     where exists (select 1 from allowed a where a.set_id = q.set_id and a.channel_code = q.channel_code)
       and exists (select 1 from allowed a where a.set_id = q.set_id and a.channel_code = c.channel_code)
     order by q.ord, c.is_default desc, c.created_at, c.id
  `,
);

/**
 * The statement's values for `queries`: the calls as columns, and each distinct channel set once
 * (calls of one app share theirs), so a batch's size is its calls plus its apps' channels.
 */
function channelCustomerValues(
  queries: readonly ChannelCustomerQuery[],
): Record<ChannelCustomerSlot, unknown> {
  const sets = new Map<string, number>();
  const setIds: number[] = [];
  const setChannels: string[] = [];
  const channelSets = queries.map((query) => {
    // JSON of an array of strings names the set exactly: no two different sets share a key.
    const key = JSON.stringify(query.channels);
    let id = sets.get(key);
    if (id === undefined) {
      id = sets.size;
      sets.set(key, id);
      for (const channel of query.channels) {
        setIds.push(id);
        setChannels.push(channel);
      }
    }
    return id;
  });
  return {
    ords: queries.map((_, i) => i),
    channelCodes: queries.map((query) => query.channelCode),
    channelCustomerIds: queries.map((query) => query.channelCustomerId),
    defaultOnly: queries.map((query) => query.defaultOnly),
    channelSets,
    setIds,
    setChannels,
  };
}

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
   * Order op 3 for many calls in one statement: per call, in the order given, the customers of the
   * enterprise its channel customer belongs to, only those of its app's channels (the others are
   * invisible to it), the default first; [] for an unknown or unbound channel customer.
   */
  async listCustomersOfChannelCustomers(
    queries: readonly ChannelCustomerQuery[],
  ): Promise<EnterpriseCustomer[][]> {
    const answers: EnterpriseCustomer[][] = queries.map(() => []);
    if (queries.length === 0) return answers;
    const rows = await customersOfChannelCustomers(this.db, channelCustomerValues(queries));
    // Rows come ordered by call, then in each call's order: appending keeps that order.
    for (const row of rows) {
      if (row.channel_code === null) continue;
      answers[row.ord]?.push({
        customerId: row.id,
        channelCode: row.channel_code,
        channelCustomerId: row.channel_customer_id,
        enterpriseGlobalId: row.global_id,
        enterpriseName: row.enterprise_name,
        isDefault: row.is_default,
      });
    }
    return answers;
  }
}
