import type { GrantTerms } from '../runtime/runtime.service.js';
import type { PoolGrantClaims } from './pool-grant.js';

/** What a relay's runtime holds every check-out to, beside each license's rules: its grant's terms. */
export function grantTermsOf(grant: PoolGrantClaims): GrantTerms {
  return {
    machines: grant.machines == null ? null : new Set(grant.machines),
    overageSeats: grant.overage.policy === 'allow' ? grant.overage.seats : 0,
  };
}
