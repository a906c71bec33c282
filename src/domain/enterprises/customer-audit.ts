import type { AuditChange } from '../audit/audit-actions.js';
import { assignmentChange, memberChange } from '../members/member-audit.js';
import type { CloudAccountMember } from './enterprise-provisioning.js';
import type { EnterpriseRecord } from './enterprises.repository.js';

/** The new enterprise a customer was bound to (its administrator came with it). */
function enterpriseDetail(enterprise: EnterpriseRecord) {
  return { enterpriseGlobalId: enterprise.globalId, enterpriseCode: enterprise.code };
}

/** Order op 1: a channel customer, new or not, bound to a new enterprise as its default. */
export function customerBound(
  customer: { id: string; channelCode: string; channelCustomerId: string; created: boolean },
  enterprise: EnterpriseRecord,
): AuditChange {
  return {
    action: 'customer.bound',
    subject: customer.id,
    enterprise: { id: enterprise.id },
    detail: {
      channelCode: customer.channelCode,
      channelCustomerId: customer.channelCustomerId,
      customerCreated: customer.created,
      ...enterpriseDetail(enterprise),
    },
  };
}

/**
 * Order op 2: a CRM customer's new enterprise, and a row for each member it made for a cloud
 * account and for that account's assignment.
 */
export function customerCreated(
  customer: { id: string; crmCustomerId: string; created: boolean },
  enterprise: EnterpriseRecord,
  members: readonly CloudAccountMember[],
): AuditChange[] {
  const owner = { enterpriseId: enterprise.id };
  return [
    {
      action: 'customer.created',
      subject: customer.id,
      enterprise: { id: enterprise.id },
      detail: {
        crmCustomerId: customer.crmCustomerId,
        customerCreated: customer.created,
        ...enterpriseDetail(enterprise),
        members: members.length,
      },
    },
    ...members.flatMap((m) => [
      memberChange('member.added', { ...m, ...owner }, { assetId: m.asset.id }),
      assignmentChange('asset.assigned', m.asset, { ...m, ...owner }),
    ]),
  ];
}

/** Order op 4: which of the customer's fields it replaced, and whether its enterprise was renamed. */
export function customerUpdated(
  customer: { id: string; crmCustomerId: string; enterpriseId: number | null },
  fields: string[],
  enterpriseRenamed: boolean,
): AuditChange {
  return {
    action: 'customer.updated',
    subject: customer.id,
    enterprise: customer.enterpriseId === null ? null : { id: customer.enterpriseId },
    detail: { crmCustomerId: customer.crmCustomerId, fields, enterpriseRenamed },
  };
}
