/**
 * Where each thing the operator's console names has its page. Every identifier in every table
 * links through here, so a page that moves moves in one place (issue: one click from a customer
 * to its licenses to its machines).
 */
const OPERATOR = '/console/operator';
const at = (base: string, id: string) => `${OPERATOR}/${base}/${encodeURIComponent(id)}`;

export const operatorLinks = {
  enterprise: (globalId: string) => at('enterprises', globalId),
  /** The Apps page narrowed to the one app: its card holds every setting and action. */
  app: (appKey: string) => `${OPERATOR}/apps?q=${encodeURIComponent(appKey)}`,
  /** A license: an asset and the products on it, its seats and the machines holding them. */
  asset: (assetNum: string) => at('assets', assetNum),
  lease: (leaseId: string) => at('leases', leaseId),
  /** An employee of an enterprise: what is assigned to them and what they run. */
  member: (globalId: string) => at('members', globalId),
  operator: (operatorId: string) => at('operators', operatorId),
  order: (orderId: string) => at('orders', orderId),
  /** The Usage page filtered to one enterprise. */
  enterpriseUsage: (globalId: string) => `${OPERATOR}/usage?enterprise=${encodeURIComponent(globalId)}`,
  search: (query: string) => `${OPERATOR}/search?q=${encodeURIComponent(query)}`,
} as const;

/** The enterprise administrator's pages for the same things, inside their own enterprise. */
const ENTERPRISE = '/console/enterprise';
export const enterpriseLinks = {
  asset: (assetId: string) => `${ENTERPRISE}/assets/${encodeURIComponent(assetId)}`,
  member: (globalId: string) => `${ENTERPRISE}/members/${encodeURIComponent(globalId)}`,
} as const;
