import type { App } from '../app-type.js';
import { ACCESS } from '../access/access.js';

export function listAppsRoute(app: App): void {
  app.get('/apps', { config: { access: ACCESS.adminKey } }, async () => app.services.apps.list());
}
