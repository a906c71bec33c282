import { Type } from 'typebox';
import { Nullable } from '../schema-types.js';

/**
 * Bounds of the enterprise and customer fields of order ops 1–4 (listed in docs/reference.md). Optional
 * text fields also accept null, which channel systems send for "not given".
 */
export const Bounds = {
  channelCode: { minLength: 1, maxLength: 64 },
  channelCustomerId: { minLength: 1, maxLength: 64 },
  crmCustomerId: { minLength: 1, maxLength: 64 },
  name: { maxLength: 100 },
  branchName: { maxLength: 100 },
  address: { maxLength: 255 },
  passwordMobile: { maxLength: 20 },
} as const;

export const OptionalText = (bounds: { maxLength: number }) => Type.Optional(Nullable(Type.String(bounds)));

const enterpriseCustomerFields = {
  customerId: Type.String(),
  channelCode: Type.String(),
  channelCustomerId: Type.String(),
  enterpriseGlobalId: Type.String(),
  enterpriseName: Type.String(),
  isDefault: Type.Boolean(),
};

/** The spec's "Enterprise customer" as op 1 returns it: always a channel customer. */
export const EnterpriseCustomer = Type.Object(enterpriseCustomerFields);

/** Op 3 may also list a customer op 2 created from its CRM id alone: no channel customer id. */
export const ListedEnterpriseCustomer = Type.Object({
  ...enterpriseCustomerFields,
  channelCustomerId: Nullable(Type.String()),
});
