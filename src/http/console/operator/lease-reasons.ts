import type { ConsoleContext } from '../context.js';
import type { MessageKey } from '../i18n/index.js';

/** Why a lease ended, as the runtime records it: its own two words, or the revocation's sentence. */
const END_REASONS: Record<string, MessageKey> = {
  checked_in: 'leases.reason.checkedIn',
  expired: 'leases.reason.expired',
  'the license was withdrawn': 'leases.reason.withdrawn',
  'the asset was disabled': 'leases.reason.assetDisabled',
  'the lent lock was disabled': 'leases.reason.lentLockDisabled',
  'the lock was withdrawn': 'leases.reason.lockWithdrawn',
  'the asset is no longer assigned to the member': 'leases.reason.unassigned',
  'the lending was returned': 'leases.reason.returned',
  'the license ended': 'leases.reason.licenseEnded',
  'the license is not valid yet': 'leases.reason.notYetValid',
  'the usage time is used up': 'leases.reason.timeUsedUp',
};

/** A lease's end reason in the reader's language; one the console does not know, as recorded. */
export function reasonText(context: ConsoleContext, reason: string): string {
  const key = END_REASONS[reason];
  return key === undefined ? reason : context.t(key);
}
