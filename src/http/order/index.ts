import type { App } from '../app-type.js';
import { batchOrderRoute } from './batch-order.js';
import { bindCustomerRoute } from './bind-customer.js';
import { createCustomerRoute } from './create-customer.js';
import { getLicenseOrderRoute } from './get-license-order.js';
import { listEnterpriseAssetsRoute } from './list-enterprise-assets.js';
import { lockAssetsRoute } from './lock-assets.js';
import { queryEnterprisesRoute } from './query-enterprises.js';
import { shellnumsRoute } from './shellnums.js';
import { unlockAssetsRoute } from './unlock-assets.js';
import { updateCustomerRoute } from './update-customer.js';

/** The order service, `/order/api/order/v1`: each route declares its callers (config.access), checked by access/enforce.ts. */
export async function orderSurface(app: App): Promise<void> {
  bindCustomerRoute(app);
  createCustomerRoute(app);
  queryEnterprisesRoute(app);
  updateCustomerRoute(app);
  shellnumsRoute(app);
  batchOrderRoute(app);
  getLicenseOrderRoute(app);
  lockAssetsRoute(app);
  unlockAssetsRoute(app);
  listEnterpriseAssetsRoute(app);
}
