import type { App } from '../app-type.js';

export function listAppsRoute(app: App): void {
  app.get('/apps', async () => app.services.apps.list());
}
