import type { App } from '../app-type.js';
import { memberGuard } from '../guards/member-guard.js';

/** The member center, `/me/api/v1`: every route behind the app- and user-token guard. */
export async function memberSurface(app: App): Promise<void> {
  app.addHook('onRequest', memberGuard(app.services));
}
