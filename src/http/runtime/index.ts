import type { App } from '../app-type.js';
import { runtimeGuard } from '../guards/runtime-guard.js';
import { checkInRoute } from './check-in.js';
import { checkOutRoute } from './check-out.js';
import { consumeRoute } from './consume.js';
import { heartbeatRoute } from './heartbeat.js';

/** The license runtime, `/runtime/v1`: every route behind the app-token guard (scope auth_runtime). */
export async function runtimeSurface(app: App): Promise<void> {
  app.addHook('onRequest', runtimeGuard(app.services));
  checkOutRoute(app);
  heartbeatRoute(app);
  checkInRoute(app);
  consumeRoute(app);
}
