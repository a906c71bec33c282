import type { App } from '../../app-type.js';
import { assetAssignRoute } from './asset-assign.js';
import { assetPageRoute } from './asset-page.js';
import { assetsRoute } from './assets.js';
import { lentLocksRoute } from './lent-locks.js';
import { offlineMachinesRoutes } from '../activation/offline-machines.js';
import { relaysRoutes } from '../relays/relays.js';
import { addMemberRoutes } from './member-add.js';
import { assignRoutes } from './member-assign.js';
import { deleteMemberRoute } from './member-delete.js';
import { editMemberRoute } from './member-edit.js';
import { importMembersRoutes } from './member-import.js';
import { lendRoute, returnRoute } from './member-lend.js';
import { memberPageRoute } from './member-page.js';
import { resetPasswordRoute } from './member-password.js';
import { membersRoute } from './members.js';
import { enterpriseUsageRoutes } from './usage.js';

/** The enterprise administrator's pages, under /console/enterprise (behind the enterprise gate). */
export function enterprisePages(app: App): void {
  membersRoute(app);
  addMemberRoutes(app);
  importMembersRoutes(app);
  memberPageRoute(app);
  editMemberRoute(app);
  resetPasswordRoute(app);
  deleteMemberRoute(app);
  assignRoutes(app);
  lendRoute(app);
  returnRoute(app);
  assetsRoute(app);
  assetPageRoute(app);
  assetAssignRoute(app);
  lentLocksRoute(app);
  offlineMachinesRoutes(app, 'enterprise');
  relaysRoutes(app, 'enterprise');
  enterpriseUsageRoutes(app);
}
