import type { App } from '../app-type.js';
import { memberGuard } from '../guards/member-guard.js';
import { addMembersRoute } from './add-members.js';
import { deleteMemberRoute } from './delete-member.js';
import { editMemberRoute } from './edit-member.js';
import { listMembersRoute } from './list-members.js';
import { resetPasswordRoute } from './reset-password.js';

/** The member center, `/me/api/v1`: every route behind the app- and user-token guard. */
export async function memberSurface(app: App): Promise<void> {
  app.addHook('onRequest', memberGuard(app.services));
  addMembersRoute(app);
  editMemberRoute(app);
  resetPasswordRoute(app);
  deleteMemberRoute(app);
  listMembersRoute(app);
}
