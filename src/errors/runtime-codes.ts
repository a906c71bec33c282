/**
 * The license runtime's codes (/runtime/v1), its one closed table. Every refusal a running copy
 * can meet has its own code, so the vendor's software can tell "wait for a seat" from "the license
 * is gone". The messages carry the limit and the current use where there is one.
 */
export const RuntimeCode = {
  validation: '90000',
  notEntitled: '90001',
  assetDisabled: '90002',
  notYetValid: '90003',
  validityEnded: '90004',
  seatsInUse: '90005',
  timeUsedUp: '90006',
  amountUsedUp: '90007',
  leaseNotFound: '90008',
  leaseRevoked: '90009',
  leaseExpired: '90010',
  offlineNotAllowed: '90011',
  alreadyActivated: '90012',
  earlyReturnNotAllowed: '90013',
  machineNotListed: '90014',
} as const;

export type RuntimeCodeValue = (typeof RuntimeCode)[keyof typeof RuntimeCode];

/** Message templates; `{0}`, `{1}` … are filled by fillMessage. */
export const runtimeMessages: Record<RuntimeCodeValue, string> = {
  '90000': 'invalid parameter',
  '90001': 'no asset of this holder carries the product',
  '90002': 'the asset carrying the product is disabled',
  '90003': 'the license is not valid yet (from {0})',
  '90004': 'the license ended (at {0})',
  '90005': 'all {0} seats of the product are in use ({1} in use)',
  '90006': 'the product has used its {0} s of usage time ({1} s used)',
  '90007': 'the product has consumed its amount of {0} ({1} consumed, {2} asked)',
  '90008': 'no such lease',
  '90009': 'the lease was revoked: {0}',
  '90010': 'the lease expired',
  '90011': 'offline leases of {0} days are not allowed for this application (at most {1})',
  '90012': 'this activation request was already answered',
  '90013': 'this application does not allow early return: the seat stays held until the lease expires',
  '90014': "this machine is not on the relay's list of machines",
};
