import { CommonCode } from '../../errors/common-codes.js';
import { deny } from './common.js';
import type { AppPrincipal } from './principal.js';

/** A channel outside the app's channels is refused like a bad token (DOMAIN.md §2). */
export function requireChannel(app: AppPrincipal, channelCode: string): void {
  if (!app.channels.includes(channelCode)) {
    throw deny(CommonCode.appTokenInvalid, `channelCode ${channelCode} is not allowed for this application`);
  }
}
