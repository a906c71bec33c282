import type { AuditAction, AuditChange } from '../audit/audit-actions.js';

/** A member as its audit rows name it: by account (the subject), in its enterprise. */
export interface AuditedMember {
  globalId: string;
  account: string;
  enterpriseId: number;
}

/** A row about a member: the account is the subject, its global id always in the detail. */
export function memberChange(
  action: Extract<AuditAction, `member.${string}`>,
  member: AuditedMember,
  detail: AuditChange['detail'] = {},
): AuditChange {
  return {
    action,
    subject: member.account,
    enterprise: { id: member.enterpriseId },
    detail: { memberGlobalId: member.globalId, ...detail },
  };
}

/** An asset given to or taken from a member: the asset number is the subject. */
export function assignmentChange(
  action: 'asset.assigned' | 'asset.unassigned',
  asset: { id: string; assetNum: string },
  member: { globalId: string; enterpriseId: number },
  detail: AuditChange['detail'] = {},
): AuditChange {
  return {
    action,
    subject: asset.assetNum,
    enterprise: { id: member.enterpriseId },
    detail: { assetId: asset.id, memberGlobalId: member.globalId, ...detail },
  };
}
