import type { FastifyRequest } from 'fastify';
import { CommonCode } from '../errors/common-codes.js';
import { MemberCode } from '../errors/member-codes.js';
import { OrderCode } from '../errors/order-codes.js';
import { RuntimeCode } from '../errors/runtime-codes.js';
import { WebhookCode } from '../errors/webhook-codes.js';

export type Surface = 'order' | 'me' | 'runtime' | 'webhooks' | 'oauth' | 'admin' | 'console' | 'ops';

export const ORDER_PREFIX = '/order/api/order/v1';
export const ME_PREFIX = '/me/api/v1';
export const RUNTIME_PREFIX = '/runtime/v1';
export const WEBHOOKS_PREFIX = '/v1/webhooks';
export const CONSOLE_PREFIX = '/console';

export function surfaceOf(url: string): Surface {
  if (url.startsWith(`${ORDER_PREFIX}/`)) return 'order';
  if (url.startsWith(`${ME_PREFIX}/`)) return 'me';
  if (url.startsWith(`${RUNTIME_PREFIX}/`)) return 'runtime';
  if (url.startsWith(`${WEBHOOKS_PREFIX}/`)) return 'webhooks';
  if (url.startsWith('/oauth2/')) return 'oauth';
  if (url.startsWith('/admin/')) return 'admin';
  if (url === CONSOLE_PREFIX || url.startsWith(`${CONSOLE_PREFIX}/`) || url.startsWith(`${CONSOLE_PREFIX}?`))
    return 'console';
  return 'ops';
}

/**
 * The surface of the route a request matched: its registered pattern, never the URL's spelling
 * (`/%6Frder/…` matches an order route and is answered as one). An unmatched request goes by its URL.
 */
export function surfaceOfRequest(request: FastifyRequest): Surface {
  return surfaceOf(request.routeOptions.url ?? request.url);
}

/** The code a surface answers for a body or query that fails its schema. */
export function validationCode(surface: Surface): string {
  switch (surface) {
    case 'order':
      return OrderCode.validation;
    case 'me':
      return MemberCode.paramEmpty;
    case 'runtime':
      return RuntimeCode.validation;
    case 'webhooks':
      return WebhookCode.validation;
    case 'oauth':
    case 'admin':
    case 'console':
    case 'ops':
      return CommonCode.securityCheckFailed;
  }
}
