import { CommonCode } from '../errors/common-codes.js';
import { MemberCode } from '../errors/member-codes.js';
import { OrderCode } from '../errors/order-codes.js';

export type Surface = 'order' | 'me' | 'oauth' | 'admin' | 'ops';

export const ORDER_PREFIX = '/order/api/order/v1';
export const ME_PREFIX = '/me/api/v1';

export function surfaceOf(url: string): Surface {
  if (url.startsWith(`${ORDER_PREFIX}/`)) return 'order';
  if (url.startsWith(`${ME_PREFIX}/`)) return 'me';
  if (url.startsWith('/oauth2/')) return 'oauth';
  if (url.startsWith('/admin/')) return 'admin';
  return 'ops';
}

/** The code a surface answers for a body or query that fails its schema. */
export function validationCode(surface: Surface): string {
  switch (surface) {
    case 'order':
      return OrderCode.validation;
    case 'me':
      return MemberCode.paramEmpty;
    case 'oauth':
    case 'admin':
    case 'ops':
      return CommonCode.securityCheckFailed;
  }
}
