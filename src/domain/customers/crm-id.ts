/**
 * A crmCustomerId is unique across the platform, so one another channel's customer holds cannot be
 * registered again. The refusal says only that, never whose it is or in which channel (DOMAIN.md
 * §2). That the key is taken shows through all the same: creating with a free one succeeds.
 */
export const CRM_ID_UNAVAILABLE = 'is not available to this application';
