import type { App } from '../app-type.js';
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

/** The member center, `/me/api/v1`: each route declares its callers (config.access), checked by access/enforce.ts. */
export async function memberSurface(app: App): Promise<void> {
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
