import type { App } from '../app-type.js';
import { memberGuard } from '../guards/member-guard.js';
import { addMembersRoute } from './add-members.js';
import { borrowAssetsRoute } from './borrow-assets.js';
import { configurePrivilegesRoute } from './configure-privileges.js';
import { deleteMemberRoute } from './delete-member.js';
import { editMemberRoute } from './edit-member.js';
import { listAssetNumsRoute } from './list-asset-nums.js';
import { listBorrowUsbKeysRoute } from './list-borrow-usb-keys.js';
import { listMembersRoute } from './list-members.js';
import { listMerchandiseProductsRoute } from './list-merchandise-products.js';
import { resetPasswordRoute } from './reset-password.js';
import { returnAssetsRoute } from './return-assets.js';

/** The member center, `/me/api/v1`: every route behind the app- and user-token guard. */
export async function memberSurface(app: App): Promise<void> {
  app.addHook('onRequest', memberGuard(app.services));
  addMembersRoute(app);
  editMemberRoute(app);
  resetPasswordRoute(app);
  deleteMemberRoute(app);
  listMembersRoute(app);
  listAssetNumsRoute(app);
  listMerchandiseProductsRoute(app);
  listBorrowUsbKeysRoute(app);
  configurePrivilegesRoute(app);
  borrowAssetsRoute(app);
  returnAssetsRoute(app);
}
