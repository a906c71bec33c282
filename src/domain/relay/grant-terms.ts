import type { GrantTerms } from '../runtime/runtime.service.js';
import type { PoolGrantClaims } from './pool-grant.js';

/** The seats past the granted ones each product may take: the overage allowed, or none. */
export function overageSeatsOf(overage: PoolGrantClaims['overage']): number {
  return overage.policy === 'allow' ? overage.seats : 0;
}

/** What a relay's runtime holds every check-out to, beside each license's rules: its grant's terms. */
export function grantTermsOf(grant: PoolGrantClaims): GrantTerms {
  return {
    machines: grant.machines == null ? null : new Set(grant.machines),
    overageSeats: overageSeatsOf(grant.overage),
  };
}

/** A grant's terms as pages and lists say them: machines listed (null: any) and overage seats. */
export function termsSummaryOf(grant: Pick<PoolGrantClaims, 'machines' | 'overage'>): {
  machines: number | null;
  overage: number;
} {
  return { machines: grant.machines?.length ?? null, overage: overageSeatsOf(grant.overage) };
}
