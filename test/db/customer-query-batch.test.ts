import type { KyselyPlugin, PluginTransformResultArgs, QueryResult, UnknownRow } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withTimeLimit, type DatabaseHandle, type Db } from '../../src/db/client.js';
import { TransactionTimeLimitError } from '../../src/db/time-limit.js';
import { CustomerQueryBatcher } from '../../src/domain/enterprises/customer-query-batcher.js';
import {
  EnterprisesRepository,
  type ChannelCustomerQuery,
} from '../../src/domain/enterprises/enterprises.repository.js';
import { newGlobalId } from '../../src/domain/shared/ids.js';
import { openTestDatabase } from '../support/database.js';
import { uniqueCode } from '../support/harness.js';

// Order op 3's reads of calls that arrive together are one statement (customer-query-batcher.ts):
// counted here statement by statement, with each call's answer compared with the answer of the
// same call in a statement of its own.

let database: DatabaseHandle;

/** Counts the statements run through its view of the database, and fails them while `failing`. */
class StatementCounter implements KyselyPlugin {
  statements = 0;
  failing = false;

  transformQuery: KyselyPlugin['transformQuery'] = (args) => args.node;

  async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    this.statements += 1;
    if (this.failing) throw new Error('the statement failed');
    return args.result;
  }
}

/** Two channels of two apps, and an enterprise with a customer in each plus one in a third. */
interface World {
  channelA: string;
  channelB: string;
  customerA: string;
  customerB: string;
  unbound: string;
}
let world: World;

async function customer(
  db: Db,
  fields: { channel: string; enterpriseId: number | null; isDefault: boolean },
): Promise<string> {
  const channelCustomerId = uniqueCode('cust');
  await db
    .insertInto('customers')
    .values({
      id: newGlobalId(),
      channel_code: fields.channel,
      channel_customer_id: channelCustomerId,
      name: 'Batch customer',
      enterprise_id: fields.enterpriseId,
      is_default: fields.isDefault,
      gongxin: false,
    })
    .execute();
  return channelCustomerId;
}

beforeAll(async () => {
  database = await openTestDatabase();
  const { db } = database;
  const enterprise = await db
    .insertInto('enterprises')
    .values({ global_id: newGlobalId(), name: 'Batch Co', code: uniqueCode('b').slice(0, 8) })
    .returning('id')
    .executeTakeFirstOrThrow();
  const channelA = uniqueCode('CHA');
  const channelB = uniqueCode('CHB');
  world = {
    channelA,
    channelB,
    customerA: await customer(db, { channel: channelA, enterpriseId: enterprise.id, isDefault: true }),
    customerB: await customer(db, { channel: channelB, enterpriseId: enterprise.id, isDefault: false }),
    unbound: await customer(db, { channel: channelA, enterpriseId: null, isDefault: false }),
  };
  await customer(db, { channel: uniqueCode('CHC'), enterpriseId: enterprise.id, isDefault: false });
});
afterAll(async () => database.close());

/** A mix of calls of both apps: known, unknown and unbound customers, default only or not. */
function mixedCalls(count: number): ChannelCustomerQuery[] {
  const { channelA, channelB } = world;
  const kinds: ChannelCustomerQuery[] = [
    { channelCode: channelA, channelCustomerId: world.customerA, channels: [channelA], defaultOnly: false },
    { channelCode: channelA, channelCustomerId: world.customerA, channels: [channelA], defaultOnly: true },
    { channelCode: channelB, channelCustomerId: world.customerB, channels: [channelB], defaultOnly: false },
    { channelCode: channelB, channelCustomerId: world.customerB, channels: [channelB], defaultOnly: true },
    {
      channelCode: channelA,
      channelCustomerId: uniqueCode('none'),
      channels: [channelA],
      defaultOnly: false,
    },
    { channelCode: channelA, channelCustomerId: world.unbound, channels: [channelA], defaultOnly: false },
    // Only for the repository: the route refuses a channel outside the app's with 60000 first.
    { channelCode: channelB, channelCustomerId: world.customerB, channels: [channelA], defaultOnly: false },
  ];
  return Array.from({ length: count }, (_, i) => kinds[i % kinds.length] as ChannelCustomerQuery);
}

/** Each call's answer in a statement of its own. */
async function aloneAnswers(queries: ChannelCustomerQuery[]) {
  const repository = new EnterprisesRepository(database.db);
  const answers = [];
  for (const query of queries) answers.push((await repository.listCustomersOfChannelCustomers([query]))[0]);
  return answers;
}

describe('order op 3 reads arriving together', () => {
  it('are one statement, each call answered with its own rows and no other app’s', async () => {
    const counter = new StatementCounter();
    const batcher = new CustomerQueryBatcher(database.db.withPlugin(counter));
    const queries = mixedCalls(35);
    const answers = await Promise.all(queries.map((query) => batcher.query(query)));
    expect(counter.statements).toBe(1);
    expect(answers).toEqual(await aloneAnswers(queries));
    // What the alone answers are: each app sees only its own channel's customer.
    expect(answers.slice(0, 7).map((answer) => answer.map((c) => c.channelCustomerId))).toEqual([
      [world.customerA],
      [world.customerA],
      [world.customerB],
      [],
      [],
      [],
      [],
    ]);
  });

  it('carry at most 200 calls a statement', async () => {
    const counter = new StatementCounter();
    const batcher = new CustomerQueryBatcher(database.db.withPlugin(counter));
    const queries = mixedCalls(450);
    const answers = await Promise.all(queries.map((query) => batcher.query(query)));
    expect(counter.statements).toBe(3);
    const alone = await aloneAnswers(queries.slice(0, 7));
    answers.forEach((answer, i) => expect(answer).toEqual(alone[i % 7]));
  });

  it('fail every call of a failed statement with its error, and answer the next calls', async () => {
    const counter = new StatementCounter();
    const batcher = new CustomerQueryBatcher(database.db.withPlugin(counter));
    counter.failing = true;
    const failed = await Promise.allSettled(mixedCalls(5).map((query) => batcher.query(query)));
    expect(failed.map((outcome) => outcome.status)).toEqual(Array(5).fill('rejected'));
    for (const outcome of failed) {
      expect(outcome.status === 'rejected' && String(outcome.reason)).toBe('Error: the statement failed');
    }
    counter.failing = false;
    const queries = mixedCalls(7);
    expect(await Promise.all(queries.map((query) => batcher.query(query)))).toEqual(
      await aloneAnswers(queries),
    );
    expect(counter.statements).toBe(2);
  });

  it('fail every call when the statement is refused for its time limit', async () => {
    // A view of the database whose time limit is up before the statement starts.
    const batcher = new CustomerQueryBatcher(withTimeLimit(database.db, 0));
    const outcomes = await Promise.allSettled(mixedCalls(4).map((query) => batcher.query(query)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(4).fill('rejected'));
    for (const outcome of outcomes) {
      expect(outcome.status === 'rejected' && outcome.reason).toBeInstanceOf(TransactionTimeLimitError);
    }
  });
});
