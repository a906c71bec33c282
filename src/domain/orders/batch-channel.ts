import type { Db } from '../../db/client.js';
import { CommonCode, commonMessages } from '../../errors/common-codes.js';
import { KeywardError } from '../../errors/keyward-error.js';
import { CustomersRepository } from '../customers/customers.repository.js';
import { invalid, orderPath } from './order-errors.js';
import type { Order } from './order-model.js';

/**
 * The channel of a batch whose body leaves `channelCode` out (some clients' gateways add the
 * identity and send none): the channel of the customers its orders name by `customerId`.
 *
 * A customer outside the app's channels is refused with 60000, the code of a `channelCode` the app
 * does not hold (DOMAIN.md §2), since that is the channel the call would act in. An unknown
 * `customerId` gets the very same answer, so the refusal never tells whether another channel's
 * customer exists (tenant isolation). Customers of different channels leave the batch's channel
 * undecided: the caller must name it.
 */
export async function channelOfCustomers(db: Db, channels: string[], orders: Order[]): Promise<string> {
  const ids: string[] = [];
  for (const order of orders) {
    // The schema already refuses this; kept so no caller of the service can skip it.
    if (order.customerId === null)
      throw invalid('channelCode', 'is required unless every order gives customerId');
    ids.push(order.customerId);
  }
  const found = await new CustomersRepository(db).findByIds([...new Set(ids)]);
  const channelById = new Map(found.map((c) => [c.id, c.channelCode] as const));
  const derived = new Set<string>();
  for (const order of orders) {
    const channel = channelById.get(order.customerId as string);
    if (channel == null || !channels.includes(channel)) {
      throw new KeywardError(CommonCode.appTokenInvalid, commonMessages[CommonCode.appTokenInvalid], {
        cause: `channelCode is not given and ${orderPath(order.sequence)}.customerId names no customer of this application's channels`,
      });
    }
    derived.add(channel);
  }
  const [channel, ...others] = [...derived];
  if (channel === undefined || others.length > 0) {
    throw invalid(
      'channelCode',
      `is required when the orders' customers are of different channels (${[...derived].sort().join(', ')})`,
    );
  }
  return channel;
}
