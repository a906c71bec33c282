import type { App } from '../../app-type.js';
import { dashboardRoute } from './dashboard.js';

/** The operator's pages, under /console/operator (behind the operator gate in session.ts). */
export function operatorPages(app: App): void {
  dashboardRoute(app);
}
