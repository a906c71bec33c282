import type { Db } from '../../db/client.js';
import { AssetsRepository } from '../assets/assets.repository.js';
import { CRM_ID_UNAVAILABLE } from '../customers/crm-id.js';
import { CustomersRepository, type CustomerRecord } from '../customers/customers.repository.js';
import { newGlobalId } from '../shared/ids.js';
import { invalid, orderPath } from './order-errors.js';
import type { Order } from './order-model.js';

/** The app the batch came from and the channel it names (already checked to be the app's). */
export interface OrderScope {
  channels: string[];
  channelCode: string;
}

function visible(customer: CustomerRecord | undefined, scope: OrderScope): CustomerRecord | undefined {
  return customer?.channelCode != null && scope.channels.includes(customer.channelCode)
    ? customer
    : undefined;
}

/**
 * DOMAIN.md §5: `customerId`, else (channelCode, channelCustomerId), else crmCustomerId. A key that
 * is given but matches nothing falls through to the next, except `customerId`: it is the
 * platform's own id, so an unknown one is a mistake, not a new customer.
 */
async function find(
  customers: CustomersRepository,
  scope: OrderScope,
  order: Order,
): Promise<CustomerRecord | undefined> {
  if (order.customerId !== null) {
    const byId = visible(await customers.findById(order.customerId), scope);
    if (!byId) throw invalid(`${orderPath(order.sequence)}.customerId`, 'no such customer');
    return byId;
  }
  if (order.channelCustomerId !== null) {
    const byChannel = await customers.findByChannel(scope.channelCode, order.channelCustomerId);
    if (byChannel) return byChannel;
  }
  if (order.crmCustomerId !== null) return visible(await customers.findByCrm(order.crmCustomerId), scope);
  return undefined;
}

/** new_buy for a customer nobody knows yet: created in the batch's channel from the order's fields. */
async function create(trx: Db, scope: OrderScope, order: Order): Promise<CustomerRecord | undefined> {
  const path = orderPath(order.sequence);
  let enterpriseId: number | null = null;
  if (order.enterpriseGlobalId !== null) {
    const found = await new AssetsRepository(trx).findVisibleEnterpriseId(
      order.enterpriseGlobalId,
      scope.channels,
    );
    if (found === undefined) throw invalid(`${path}.enterpriseGlobalId`, 'no such enterprise');
    enterpriseId = found;
  }
  return new CustomersRepository(trx).insertIfAbsent({
    id: newGlobalId(),
    channelCode: scope.channelCode,
    channelCustomerId: order.channelCustomerId,
    crmCustomerId: order.crmCustomerId,
    name: order.customerName,
    customerType: order.customerType,
    branchCode: order.branchCode,
    branchName: order.branchName,
    address: order.address,
    securityMobile: order.passwordMobile,
    enterpriseId,
    isDefault: false,
    gongxin: false,
  });
}

/** The customer an order acts for; new_buy creates an unknown one, a revocation refuses it. */
export async function resolveCustomer(trx: Db, scope: OrderScope, order: Order): Promise<string> {
  const customers = new CustomersRepository(trx);
  const found = await find(customers, scope, order);
  if (found) return found.id;
  const path = orderPath(order.sequence);
  if (order.orderType !== 'new_buy') {
    throw invalid(`${path}.customerId`, 'no customer matches customerId, channelCustomerId or crmCustomerId');
  }
  const created = (await create(trx, scope, order)) ?? (await find(customers, scope, order));
  // Lost to a concurrent creator (then found above), or a key held in a channel the app lacks.
  if (!created) throw invalid(`${path}.crmCustomerId`, CRM_ID_UNAVAILABLE);
  return created.id;
}

/**
 * The customers of a batch's orders, in order. Those named by `customerId` (the usual case) are
 * read in one statement; the others are resolved one by one, as an earlier order may create the
 * customer a later one names by its channel or CRM key.
 */
export async function resolveCustomers(trx: Db, scope: OrderScope, orders: Order[]): Promise<string[]> {
  const named = [...new Set(orders.flatMap((o) => (o.customerId === null ? [] : [o.customerId])))];
  const byId = new Map((await new CustomersRepository(trx).findByIds(named)).map((c) => [c.id, c] as const));
  const ids: string[] = [];
  for (const order of orders) {
    if (order.customerId === null) {
      ids.push(await resolveCustomer(trx, scope, order));
      continue;
    }
    const customer = visible(byId.get(order.customerId), scope);
    if (!customer) throw invalid(`${orderPath(order.sequence)}.customerId`, 'no such customer');
    ids.push(customer.id);
  }
  return ids;
}
