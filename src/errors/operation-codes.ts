import { CommonCode, commonMessages } from './common-codes.js';
import { MemberCode, memberMessages, type MemberCodeValue } from './member-codes.js';
import { OrderCode } from './order-codes.js';
import { RuntimeCode, runtimeMessages } from './runtime-codes.js';
import { WebhookCode, webhookMessages } from './webhook-codes.js';

/**
 * Which business codes each operation may answer with HTTP 299. The OpenAPI document lists them
 * per operation from here, so route files carry no documentation of their own.
 */

/** order-service.md, Errors: every operation lists 13004 and 500; the guards add 60000 and 70001. */
export const orderOperationCodes: readonly string[] = [
  OrderCode.validation,
  CommonCode.internal,
  CommonCode.appTokenInvalid,
  CommonCode.securityCheckFailed,
];

/** member-center.md: "every operation can also return 60000, 60005, 70001, 500". */
export const memberSharedCodes: readonly string[] = [
  CommonCode.appTokenInvalid,
  CommonCode.userTokenInvalid,
  CommonCode.securityCheckFailed,
  CommonCode.internal,
];

const M = MemberCode;

/**
 * member-center.md "Codes by operation", keyed by method and path below `/me/api/v1`. Two codes
 * are added where DOMAIN.md §2 and §8 make them reachable although the spec's table omits them:
 * 33003 (a plain member calling an administrator's operation) and 40000 (a body that fails its
 * schema). Editing a member (op 2) follows op 1's rules for name and mobile, so it also answers
 * 40022 and 10004. The route DOMAIN.md adds (`…/return`) answers the codes of lending that apply
 * to giving back: the member (60026), the caller's right (33003), the lent lock (33008, 33018).
 */
const memberTable: Record<string, readonly MemberCodeValue[]> = {
  'POST /enterprise/{enterpriseGlobalId}/member': [
    M.paramEmpty,
    M.userListEmpty,
    M.tooManyUsers,
    M.accountEmpty,
    M.passwordEmpty,
    M.groupIdEmpty,
    M.nameEmpty,
    M.passwordLength,
    M.nameTooLong,
    M.remarkTooLong,
    M.accountCharacters,
    M.mobileInvalid,
    M.suffixEmpty,
    M.memberLimit,
    M.partialFailure,
    M.userCenter,
    M.permission,
  ],
  'PUT /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}': [
    M.userNotFound,
    M.paramEmpty,
    M.nameEmpty,
    M.nameTooLong,
    M.remarkTooLong,
    M.mobileInvalid,
    M.userCenter,
    M.permission,
  ],
  'PUT /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}/resetPassword': [
    M.userNotFound,
    M.paramEmpty,
    M.passwordEmpty,
    M.passwordLength,
    M.userCenter,
    M.permission,
  ],
  'DELETE /enterprise/{enterpriseGlobalId}/member/{memberGlobalId}': [
    M.userNotFound,
    M.userCenter,
    M.permission,
  ],
  'GET /enterprise/{enterpriseGlobalId}/members': [M.paramEmpty, M.userCenter, M.permission],
  'GET /enterprise/{enterpriseGlobalId}/asset/assetNums': [M.notBound, M.permission],
  'GET /enterprise/asset/{assetId}/merchandiseProducts': [M.notBound, M.assetNotFound, M.permission],
  'GET /enterprise/{enterpriseGlobalId}/asset/borrowUsbKeys': [M.notBound, M.permission],
  'POST /enterprise/member/{memberGlobalId}/privileges': [
    M.severalMembers,
    M.assetNotFound,
    M.otherCustomer,
    M.memberNotMatched,
    M.assignedTwice,
    M.paramEmpty,
    M.permission,
  ],
  'POST /enterprise/member/{memberGlobalId}/borrow': [
    M.memberNotMatched,
    M.paramEmpty,
    M.nodesInsufficient,
    M.permission,
    M.alreadyLent,
    M.lentLockAbnormal,
    M.lentLockTaken,
    M.lendFailed,
  ],
  'POST /enterprise/member/{memberGlobalId}/return': [
    M.memberNotMatched,
    M.paramEmpty,
    M.permission,
    M.lentLockAbnormal,
    M.lentLockTaken,
  ],
};

/** Path parameters match whatever a route file names them: `{x}` and `:x` both become `{}`. */
function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]+\}|:[A-Za-z0-9_]+/g, '{}')}`;
}

const memberByKey = new Map(
  Object.entries(memberTable).map(([key, codes]) => {
    const [method = '', path = ''] = key.split(' ');
    return [operationKey(method, path), codes] as const;
  }),
);

/**
 * The codes of a member-center operation (path below the prefix), or undefined if unlisted. Every
 * operation may also answer 40000: a URL that does not decode, or a path or query parameter that
 * fails its schema, is refused with the surface's validation code before the operation runs.
 */
export function memberOperationCodes(method: string, path: string): readonly string[] | undefined {
  const own = memberByKey.get(operationKey(method, path));
  return own === undefined ? undefined : [...new Set([...memberSharedCodes, M.paramEmpty, ...own])];
}

/** Codes that exist only in the order service's spec table, with its wording. */
const orderMessages: Record<string, string> = {
  [OrderCode.validation]: 'parameter validation failure; the message names the field',
};

/** The table's message of a code, for the reference page. */
export function codeMessage(code: string): string {
  return (
    (commonMessages as Record<string, string>)[code] ??
    (memberMessages as Record<string, string>)[code] ??
    orderMessages[code] ??
    (runtimeMessages as Record<string, string>)[code] ??
    (webhookMessages as Record<string, string>)[code] ??
    ''
  );
}

const R = RuntimeCode;

/** What every runtime call can answer: the guard's codes, bad input, a fault of ours. */
const runtimeSharedCodes: readonly string[] = [
  R.validation,
  CommonCode.appTokenInvalid,
  CommonCode.userTokenInvalid,
  CommonCode.securityCheckFailed,
  CommonCode.internal,
];

const leaseCodes = [R.leaseNotFound, R.leaseExpired, R.leaseRevoked];

/** The license runtime's operations, keyed by method and path below `/runtime/v1`. */
const runtimeTable: Record<string, readonly string[]> = {
  'POST /leases': [
    R.notEntitled,
    R.assetDisabled,
    R.notYetValid,
    R.validityEnded,
    R.seatsInUse,
    R.timeUsedUp,
    R.amountUsedUp,
    R.offlineNotAllowed,
    // On a relay whose grant lists its machines.
    R.machineNotListed,
  ],
  'POST /leases/{leaseId}/heartbeat': leaseCodes,
  'POST /leases/{leaseId}/check-in': [R.leaseNotFound],
  'POST /leases/{leaseId}/consume': [...leaseCodes, R.amountUsedUp],
  // An activation is a check-out for the requesting machine: its refusals, and a replay.
  'POST /activations': [
    R.notEntitled,
    R.assetDisabled,
    R.notYetValid,
    R.validityEnded,
    R.seatsInUse,
    R.timeUsedUp,
    R.amountUsedUp,
    R.offlineNotAllowed,
    R.alreadyActivated,
  ],
  'POST /activations/return': [R.leaseNotFound, R.earlyReturnNotAllowed],
};

const runtimeByKey = new Map(
  Object.entries(runtimeTable).map(([key, codes]) => {
    const [method = '', path = ''] = key.split(' ');
    return [operationKey(method, path), codes] as const;
  }),
);

/** The codes of a runtime operation (path below the prefix); the shared ones when unlisted. */
export function runtimeOperationCodes(method: string, path: string): readonly string[] {
  return [...new Set([...runtimeSharedCodes, ...(runtimeByKey.get(operationKey(method, path)) ?? [])])];
}

/** What every webhooks call can answer: the guard's codes, bad input, a fault of ours. */
const webhookSharedCodes: readonly string[] = [
  WebhookCode.validation,
  CommonCode.appTokenInvalid,
  CommonCode.securityCheckFailed,
  CommonCode.internal,
];

/** The codes of a webhooks operation: creating may meet the bound, the rest an unknown endpoint. */
export function webhookOperationCodes(method: string, path: string): readonly string[] {
  const own =
    method === 'POST' && path === '/endpoints'
      ? [WebhookCode.tooManyEndpoints]
      : path === '/endpoints'
        ? []
        : [WebhookCode.endpointNotFound];
  return [...webhookSharedCodes, ...own];
}
