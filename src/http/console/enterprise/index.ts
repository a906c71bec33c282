import type { App } from '../../app-type.js';
import { membersRoute } from './members.js';

/** The enterprise administrator's pages, under /console/enterprise (behind the enterprise gate). */
export function enterprisePages(app: App): void {
  membersRoute(app);
}
