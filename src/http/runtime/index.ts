import type { App } from '../app-type.js';
import { activateRoute } from './activate.js';
import { checkInRoute } from './check-in.js';
import { checkOutRoute } from './check-out.js';
import { consumeRoute } from './consume.js';
import { heartbeatRoute } from './heartbeat.js';
import { returnActivationRoute } from './return-activation.js';

/** The license runtime, `/runtime/v1`: each route declares its callers (config.access), checked by access/enforce.ts. */
export async function runtimeSurface(app: App): Promise<void> {
  checkOutRoute(app);
  heartbeatRoute(app);
  checkInRoute(app);
  consumeRoute(app);
  activateRoute(app);
  returnActivationRoute(app);
}
