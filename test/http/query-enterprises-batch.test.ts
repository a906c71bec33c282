import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { EnterprisesRepository } from '../../src/domain/enterprises/enterprises.repository.js';
import { appToken, createTestApp, type TestApp } from '../support/fixtures.js';
import { startHarness, uniqueCode, type Harness } from '../support/harness.js';
import {
  dataOf,
  enterpriseRow,
  orderCalls,
  seedCustomer,
  type EnterpriseCustomerData,
} from './enterprise-helpers.js';

// Order op 3 calls that arrive together share one statement (customer-query-batcher.ts). Each must
// still get exactly the answer it gets alone: calls of two apps of different channels, whose
// enterprises each hold a customer of the other's channel, mixed with unknown and unbound
// customers, defaultCustomer Y/N, and calls naming a channel the app does not hold.

let h: Harness;
let appA: TestApp;
let appB: TestApp;
let callsA: ReturnType<typeof orderCalls>;
let callsB: ReturnType<typeof orderCalls>;

/** Channel customer ids: each enterprise's default, and its customer in the other app's channel. */
const ids = { ownerA: '', secondA: '', crossB: '', ownerB: '', crossA: '', unbound: '' };

beforeAll(async () => {
  h = await startHarness();
  appA = await createTestApp(h, { scopes: ['auth_order'], channels: [uniqueCode('CHA'), uniqueCode('CHA')] });
  appB = await createTestApp(h, { scopes: ['auth_order'], channels: [uniqueCode('CHB')] });
  callsA = orderCalls(h, await appToken(h, appA));
  callsB = orderCalls(h, await appToken(h, appB));
  const [a1, a2] = appA.channels as [string, string];
  const [b1] = appB.channels as [string];

  const bind = async (calls: typeof callsA, channelCode: string, enterpriseName: string) => {
    const owner = dataOf<EnterpriseCustomerData>(
      await calls.post('/enterprise/user/bind', {
        channelCode,
        channelCustomerId: uniqueCode('cust'),
        enterpriseName,
      }),
    );
    return { owner, enterprise: await enterpriseRow(h, owner.enterpriseGlobalId) };
  };
  const seed = async (channelCode: string, enterpriseId: number | null) =>
    (await seedCustomer(h, { channelCode, channelCustomerId: uniqueCode('cust'), enterpriseId }))
      .channelCustomerId ?? '';

  const one = await bind(callsA, a1, 'Batch One');
  const two = await bind(callsB, b1, 'Batch Two');
  ids.ownerA = one.owner.channelCustomerId ?? '';
  ids.ownerB = two.owner.channelCustomerId ?? '';
  ids.secondA = await seed(a2, one.enterprise.id);
  ids.crossB = await seed(b1, one.enterprise.id);
  ids.crossA = await seed(a1, two.enterprise.id);
  ids.unbound = await seed(a1, null);
});
afterAll(async () => h.close());
afterEach(() => {
  vi.restoreAllMocks();
});

interface Call {
  app: 'A' | 'B';
  params: Record<string, string>;
}

function calls(): Call[] {
  const [a1, a2] = appA.channels as [string, string];
  const [b1] = appB.channels as [string];
  const asA = (params: Record<string, string>): Call => ({ app: 'A', params });
  const asB = (params: Record<string, string>): Call => ({ app: 'B', params });
  return [
    asA({ channelCode: a1, channelCustomerId: ids.ownerA }),
    asB({ channelCode: b1, channelCustomerId: ids.ownerB }),
    asA({ channelCode: a1, channelCustomerId: ids.ownerA, defaultCustomer: 'Y' }),
    asB({ channelCode: b1, channelCustomerId: ids.ownerB, defaultCustomer: 'Y' }),
    asA({ channelCode: a2, channelCustomerId: ids.secondA, defaultCustomer: 'N' }),
    asB({ channelCode: b1, channelCustomerId: ids.crossB }),
    asA({ channelCode: a1, channelCustomerId: ids.crossA }),
    asB({ channelCode: b1, channelCustomerId: ids.crossB, defaultCustomer: 'Y' }),
    asA({ channelCode: a1, channelCustomerId: ids.crossA, defaultCustomer: 'Y' }),
    asB({ channelCode: b1, channelCustomerId: uniqueCode('none') }),
    asA({ channelCode: a2, channelCustomerId: uniqueCode('none'), defaultCustomer: 'N' }),
    asA({ channelCode: a1, channelCustomerId: ids.unbound }),
    // A channel the app does not hold: refused with 60000 before any read.
    asA({ channelCode: b1, channelCustomerId: ids.crossB }),
    asB({ channelCode: a1, channelCustomerId: ids.ownerA }),
  ];
}

const send = (call: Call) => (call.app === 'A' ? callsA : callsB).get('/enterprise/user/query', call.params);

interface Answer {
  status: number;
  body: { code: number | string; data?: EnterpriseCustomerData[] };
}

const answerOf = async (call: Call): Promise<Answer> => {
  const response = await send(call);
  return { status: response.statusCode, body: response.json() as Answer['body'] };
};

/** The customers' channel customer ids of a successful answer. */
const customersOf = (answer: Answer | undefined) =>
  answer?.body.data?.map((customer) => customer.channelCustomerId);

describe('order op 3 calls arriving together', () => {
  it('each gets exactly the answer it gets alone', async () => {
    const list = calls();
    const alone: Answer[] = [];
    for (const call of list) alone.push(await answerOf(call));

    // What the answers are: each app sees only its own channels' customers of either enterprise.
    expect(alone.map(customersOf)).toEqual([
      [ids.ownerA, ids.secondA],
      [ids.ownerB],
      [ids.ownerA],
      [ids.ownerB],
      [ids.ownerA, ids.secondA],
      [ids.crossB],
      [ids.crossA],
      [],
      [],
      [],
      [],
      [],
      undefined,
      undefined,
    ]);
    expect(alone.slice(-2).map((answer) => [answer.status, answer.body.code])).toEqual([
      [299, '60000'],
      [299, '60000'],
    ]);

    // The spy calls the statement through and records the calls each statement carried.
    const spy = vi.spyOn(EnterprisesRepository.prototype, 'listCustomersOfChannelCustomers');

    // Each call three times, all at once.
    const burst = [...list, ...list, ...list];
    const together = await Promise.all(burst.map(answerOf));
    together.forEach((answer, i) => expect(answer).toEqual(alone[i % list.length]));

    // They really shared statements: far fewer reads than calls (the calls that reach the service,
    // all but the two refused), and the two apps' calls were read in one statement.
    const reads = spy.mock.calls.map(([queries]) => queries);
    const readCalls = reads.flat();
    expect(readCalls).toHaveLength(3 * (list.length - 2));
    expect(reads.length).toBeLessThan(readCalls.length / 4);
    expect(
      reads.some(
        (batch) =>
          batch.some((q) => q.channels.includes(appA.channels[0] ?? '')) &&
          batch.some((q) => q.channels.includes(appB.channels[0] ?? '')),
      ),
    ).toBe(true);
  });
});
