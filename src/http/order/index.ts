import type { App } from '../app-type.js';
import { orderGuard } from '../guards/order-guard.js';
import { shellnumsRoute } from './shellnums.js';

/** The order service, `/order/api/order/v1`: every route behind the app-token guard. */
export async function orderSurface(app: App): Promise<void> {
  app.addHook('onRequest', orderGuard(app.services));
  shellnumsRoute(app);
}
