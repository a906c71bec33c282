import type { App } from '../../app-type.js';
import { appsRoutes } from './apps.js';
import { accountPasswordRoutes } from './account-password.js';
import { accountTwoFactorRoutes } from './account-two-factor.js';
import { accountRoutes } from './account.js';
import { auditRoutes } from './audit.js';
import { operatorActionRoutes } from './operator-actions.js';
import { operatorsRoute } from './operators.js';
import { dashboardRoute } from './dashboard.js';
import { enterpriseRoutes } from './enterprise.js';
import { enterprisesRoute } from './enterprises.js';
import { leasesRoute } from './leases.js';
import { offlineMachinesRoutes } from '../activation/offline-machines.js';
import { ordersRoute } from './orders.js';
import { usageRoutes } from './usage.js';
import { webhookActionRoutes } from './webhook-actions.js';
import { webhookEndpointRoute } from './webhook-endpoint.js';
import { webhooksRoute } from './webhooks.js';

/** The operator's pages, under /console/operator (behind the operator gate in session.ts). */
export function operatorPages(app: App): void {
  dashboardRoute(app);
  appsRoutes(app);
  enterprisesRoute(app);
  enterpriseRoutes(app);
  ordersRoute(app);
  leasesRoute(app);
  usageRoutes(app);
  offlineMachinesRoutes(app, 'operator');
  webhooksRoute(app);
  webhookEndpointRoute(app);
  webhookActionRoutes(app);
  auditRoutes(app);
  operatorsRoute(app);
  operatorActionRoutes(app);
  accountRoutes(app);
  accountPasswordRoutes(app);
  accountTwoFactorRoutes(app);
}
