import type { App } from '../app-type.js';
import { adminMay } from '../access/access.js';

export function listAppsRoute(app: App): void {
  app.get('/apps', { config: { access: adminMay('read') } }, async () => app.services.apps.list());
}
